// Package harness brings up a real multi-node Docker Swarm on one Linux
// machine for tests, and removes all of it afterwards.
//
// Every node is a dockerd (with its own containerd, data and exec roots,
// socket, engine key and hostname) in a network, mount and UTS namespace
// of its own; the nodes' eth0 are veths on a bridge that lives in a
// separate "switch" namespace, with no default route. The host's own
// dockerd, its swarm, networks and containers are never touched, so a
// cluster runs beside the usual single-node tests (see
// ../shared/MULTINODE.md for the verified facts this follows).
//
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{Nodes: 3})) }
//	...
//	c := harness.Shared(t)          // the package's cluster
//	c.Nodes[1].Client               // node 2's engine
//	c.LoadImage(t, swarmtest.Image(t, "web"))
//
// One cluster serves a whole test package (Main starts it before the
// tests and removes it after them); Start and Close are there for a test
// that needs a cluster of its own. Teardown kills the containers by their
// cgroups, stops each dockerd, kills whatever is left in the namespaces,
// removes the cgroups, the namespaces (the veths and the bridge go with
// them), the mounts and the data directories. A cluster whose test binary
// died without tearing down (a panic, a timeout) is removed by the next
// Start, and Leftovers lists anything of any cluster still there (the
// leftovers check of `make test` calls it).
//
// Namespaces, links and addresses are made with iproute2's `ip` and
// util-linux's `nsenter` and `unshare`, always with argument vectors, never
// a shell string: exec.go is the only file that imports os/exec. The node
// launcher (the step between unshare and dockerd that fixes up the mount
// namespace) is this very test binary, run again with SLIPWAY_MULTINODE_LAUNCH
// set: see launch.go.
//
// It needs root, iproute2, util-linux and dockerd/containerd/runc. It is
// test-only: product code must not import it, and it must not import any
// Slipway package but runtime/swarm/swarmtest (images) and test/summary.
package harness
