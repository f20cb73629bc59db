// Package multinode holds Slipway's tests on a real 3-node Docker Swarm
// (harness/ starts it in network namespaces beside the host's engine):
// images built on one node run on all of them, private images pulled by
// every node with the team's credentials, volumes pinned to their node,
// deployments surviving a drained node, and a route served by the gateway
// of an ingress node (its agent a global service) from a task on another
// node. One cluster serves the whole package (TestMain).
package multinode
