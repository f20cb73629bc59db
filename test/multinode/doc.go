// Package multinode holds Slipway's tests on a real 3-node Docker Swarm
// (harness/ starts it in network namespaces beside the host's engine):
// images built on one node run on all of them, volumes pinned to their
// node, and deployments surviving a drained node. One cluster serves the
// whole package (TestMain). Private images and the gateway are tested on
// one node (pipeline, runtime/ingress), not here yet.
package multinode
