// Package multinode holds Slipway's tests on a real 3-node Docker Swarm
// (harness/ starts it in network namespaces beside the host's engine):
// images built on one node run on all of them, private images with a
// team's registry credentials, volumes pinned to their node, the gateway
// on one node reaching tasks on another, and deployments surviving a
// drained node. One cluster serves the whole package (TestMain).
package multinode
