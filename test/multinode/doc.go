// Package multinode holds Slipway's tests on a real 3-node Docker Swarm
// (harness/ starts it in network namespaces beside the host's engine):
// images built on one node run on all of them, private images pulled by
// every node with the team's credentials, volumes pinned to their node,
// deployments surviving a drained node, and routes served by the gateways
// of two ingress nodes (their agent a global service) from tasks on other
// nodes, the first deployment already trusting both, a node's gateway
// removed with its ingress label; and deploy/slipway-stack.yml installed
// whole on a cluster of its own, serving the README's example and running
// a git-built application (from a private git server over HTTP) on every
// node. One cluster serves the rest of the package (TestMain).
package multinode
