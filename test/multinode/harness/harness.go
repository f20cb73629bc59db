package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"
)

// Where clusters live. Every cluster has its own directory in each and
// namespaces, links and cgroups named with its prefix (namePrefix + id).
const (
	runRoot    = "/run/slipway-mn"
	dataRoot   = "/var/lib/slipway-mn"
	namePrefix = "slwmn"
)

// Addresses. The switch subnet (10.230.<k>.0/24) is routed from the host
// (the cluster's host link), so each running cluster has its own k; the
// rest lives inside the nodes' namespaces, where clusters may share it.
const (
	switchNet   = "10.230"
	overlayPool = "10.232.0.0/16"
)

// Options shape a cluster.
type Options struct {
	// Nodes is how many nodes (1 to 9; 3 when zero).
	Nodes int
	// Managers is how many of them are managers (node 1 first; 1 when zero).
	Managers int
	// ReadyTimeout bounds the whole start (90 s when zero).
	ReadyTimeout time.Duration
}

// Cluster is a running multi-node Swarm.
type Cluster struct {
	ID string
	// Nodes in order: Nodes[0] is node 1, the first manager.
	Nodes []*Node
	// Ready is how long Start took until every node was Ready.
	Ready time.Duration
	// HostIP is the host's address on the cluster's switch: the nodes
	// reach a server the test runs there (and trust it as a plain-HTTP
	// registry), and the test reaches the nodes' IPs from the host.
	HostIP string

	run, data string
	subnet    int
	mu        sync.Mutex
	loaded    map[string]bool
	closed    bool
}

// Node is one dockerd of the cluster.
type Node struct {
	// Index counts from 1.
	Index int
	// Hostname is the node's hostname and Swarm node name.
	Hostname string
	// IP is the node's address on the cluster's switch.
	IP string
	// Host is the engine's DOCKER_HOST (unix://...).
	Host string
	// ID is the Swarm node ID.
	ID      string
	Manager bool
	Client  *client.Client

	netns string
	// done is closed when the node's dockerd (our child) exited.
	done <-chan struct{}
}

func (c *Cluster) prefix() string { return namePrefix + c.ID }

// Manager is node 1's engine, the cluster's first manager.
func (c *Cluster) Manager() *client.Client { return c.Nodes[0].Client }

// SocketTemplate is each node's own engine socket as a path holding
// Swarm's {{.Node.Hostname}} template: a global service that bind-mounts
// it gets the engine of the node it runs on, as one mounting
// /var/run/docker.sock does on separate machines (all nodes here share
// one filesystem, each engine with a socket path of its own).
func (c *Cluster) SocketTemplate() string { return filepath.Join(c.run, "{{.Node.Hostname}}.sock") }

// Node returns node i (counting from 1).
func (c *Cluster) Node(i int) *Node { return c.Nodes[i-1] }

// NodeByID returns the node with the Swarm node ID id, or nil.
func (c *Cluster) NodeByID(id string) *Node {
	for _, n := range c.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// switchAddr is host number host on the cluster's switch subnet.
func (c *Cluster) switchAddr(host int) string {
	return fmt.Sprintf("%s.%d.%d", switchNet, c.subnet, host)
}

// Start brings up a cluster and waits until every node is Ready. On
// failure everything it made is removed again. Clusters left behind by
// test binaries that died are removed first.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.Managers == 0 {
		opts.Managers = 1
	}
	if opts.Nodes < 1 || opts.Nodes > 9 || opts.Managers > opts.Nodes {
		return nil, fmt.Errorf("multinode: %d nodes with %d managers: want 1 to 9 nodes and at most as many managers", opts.Nodes, opts.Managers)
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 90 * time.Second
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("multinode: needs root (network namespaces, mounts, dockerd)")
	}
	if err := lookTools(); err != nil {
		return nil, fmt.Errorf("multinode: %w", err)
	}
	ReapStale()
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.ReadyTimeout)
	defer cancel()
	var b [2]byte
	_, _ = rand.Read(b[:])
	c := &Cluster{ID: hex.EncodeToString(b[:]), loaded: map[string]bool{}}
	c.run, c.data = filepath.Join(runRoot, c.ID), filepath.Join(dataRoot, c.ID)
	if err := c.up(ctx, opts); err != nil {
		if cerr := c.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("removing the failed cluster: %w", cerr))
		}
		return nil, fmt.Errorf("multinode: start %d nodes: %w", opts.Nodes, err)
	}
	c.Ready = time.Since(start)
	return c, nil
}

func (c *Cluster) up(ctx context.Context, opts Options) error {
	for _, d := range []string{c.run, c.data} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return err
		}
	}
	// The owner lets a later Start (or the leftovers check) tell a cluster
	// whose test binary died from one in use.
	if err := os.WriteFile(filepath.Join(c.run, "owner"), []byte(ownerStamp(os.Getpid())), 0o644); err != nil {
		return err
	}
	if err := c.makeSwitch(ctx); err != nil {
		return err
	}
	sw, br := c.prefix()+"-sw", c.prefix()+"br"
	// The switch only bridges; it routes nothing.
	if err := sysctlIn(ctx, sw, "net.ipv4.ip_forward=0"); err != nil {
		return err
	}
	dockerd, err := dockerdPath()
	if err != nil {
		return err
	}
	for i := 1; i <= opts.Nodes; i++ {
		n, err := c.startNode(ctx, i, sw, br, dockerd)
		if n != nil {
			c.Nodes = append(c.Nodes, n)
		}
		if err != nil {
			return err
		}
	}
	for _, n := range c.Nodes {
		if err := n.waitEngine(ctx); err != nil {
			return err
		}
	}
	return c.formSwarm(ctx, opts.Managers)
}

// startNode makes node i's namespace and link and starts its dockerd.
func (c *Cluster) startNode(ctx context.Context, i int, sw, br, dockerd string) (*Node, error) {
	n := &Node{Index: i, Hostname: fmt.Sprintf("%s-node%d", c.prefix(), i), IP: c.switchAddr(10 + i), netns: fmt.Sprintf("%s-n%d", c.prefix(), i)}
	run := filepath.Join(c.run, fmt.Sprintf("node%d", i))
	data := filepath.Join(c.data, fmt.Sprintf("node%d", i))
	sock := filepath.Join(c.run, fmt.Sprintf("node%d.sock", i))
	n.Host = "unix://" + sock
	for _, d := range []string{run, data} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return nil, err
		}
	}
	// The same socket by hostname, for SocketTemplate.
	if err := os.Symlink(filepath.Base(sock), filepath.Join(c.run, n.Hostname+".sock")); err != nil {
		return nil, err
	}
	veth := fmt.Sprintf("%sv%d", c.prefix(), i)
	steps := [][]string{
		{"netns", "add", n.netns},
		{"-n", n.netns, "link", "set", "lo", "up"},
		{"link", "add", veth, "netns", sw, "type", "veth", "peer", "name", "eth0", "netns", n.netns},
		{"-n", sw, "link", "set", veth, "master", br, "up"},
		{"-n", n.netns, "addr", "add", n.IP + "/24", "dev", "eth0"},
		{"-n", n.netns, "link", "set", "eth0", "up"},
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			return nil, err
		}
	}
	// Without a key of its own every node would share
	// /etc/docker/key.json, and with it one engine ID.
	conf := filepath.Join(run, "daemon.json")
	if err := os.WriteFile(conf, fmt.Appendf(nil, `{"deprecated-key-path": %q}`+"\n", filepath.Join(run, "key.json")), 0o644); err != nil {
		return nil, err
	}
	spec := launchSpec{
		Hostname: n.Hostname,
		RunDir:   run,
		Dockerd: []string{dockerd,
			"--config-file", conf,
			"-H", n.Host,
			"--data-root", data,
			"--exec-root", filepath.Join(run, "exec"),
			"--pidfile", filepath.Join(run, "dockerd.pid"),
			"--bip", fmt.Sprintf("10.231.%d.1/24", i),
			"--default-address-pool", fmt.Sprintf("base=10.231.%d.0/20,size=24", 16*i),
			// Teardown finds the node's containers by their cgroups.
			"--cgroup-parent", "/" + n.netns,
			// A plain-HTTP registry a test serves on the host link.
			"--insecure-registry", c.switchAddr(0) + "/24",
			"--swarm-default-advertise-addr", n.IP,
		},
		Env: []string{"PATH=" + os.Getenv("PATH")},
	}
	logFile, err := os.Create(filepath.Join(run, "dockerd.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	pid, done, err := startLauncher(filepath.Join("/run/netns", n.netns), spec, logFile)
	if err != nil {
		return n, err
	}
	n.done = done
	if err := os.WriteFile(filepath.Join(run, "dockerd.pid.launcher"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return n, err
	}
	cli, err := client.NewClientWithOpts(client.WithHost(n.Host), client.WithAPIVersionNegotiation())
	if err != nil {
		return n, err
	}
	n.Client = cli
	return n, nil
}

// waitEngine waits until the node's dockerd answers.
func (n *Node) waitEngine(ctx context.Context) error {
	for {
		select {
		case <-n.done:
			return fmt.Errorf("dockerd of node %d exited at start: %s", n.Index, n.logTail())
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := n.Client.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("dockerd of node %d does not answer: %w: %s", n.Index, err, n.logTail())
		}
	}
}

// logTail is the end of the node's dockerd log, without info lines.
func (n *Node) logTail() string {
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(strings.TrimPrefix(n.Host, "unix://")), fmt.Sprintf("node%d", n.Index), "dockerd.log"))
	var keep []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if line != "" && !strings.Contains(line, "level=info") {
			keep = append(keep, line)
		}
	}
	if len(keep) > 8 {
		keep = keep[len(keep)-8:]
	}
	return strings.Join(keep, "\n")
}

// formSwarm inits the swarm on node 1, joins the others and waits until
// every node is Ready.
func (c *Cluster) formSwarm(ctx context.Context, managers int) error {
	first := c.Nodes[0]
	if _, err := first.Client.SwarmInit(ctx, swarm.InitRequest{
		ListenAddr: first.IP + ":2377", AdvertiseAddr: first.IP,
		DefaultAddrPool: []string{overlayPool}, SubnetSize: 24,
	}); err != nil {
		return fmt.Errorf("swarm init: %w", err)
	}
	sw, err := first.Client.SwarmInspect(ctx)
	if err != nil {
		return err
	}
	// Managers join one at a time (each must be part of the quorum before
	// the next); workers join together.
	var wg sync.WaitGroup
	errs := make([]error, len(c.Nodes))
	for i, n := range c.Nodes[1:] {
		token := sw.JoinTokens.Worker
		if n.Index <= managers {
			token = sw.JoinTokens.Manager
		}
		join := func() {
			errs[i] = n.Client.SwarmJoin(ctx, swarm.JoinRequest{
				ListenAddr: n.IP + ":2377", AdvertiseAddr: n.IP,
				RemoteAddrs: []string{first.IP + ":2377"}, JoinToken: token,
			})
		}
		if n.Index <= managers {
			join()
			continue
		}
		wg.Go(join)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("swarm join: %w", err)
	}
	for _, n := range c.Nodes {
		info, err := n.Client.Info(ctx)
		if err != nil {
			return err
		}
		n.ID = info.Swarm.NodeID
		n.Manager = info.Swarm.ControlAvailable
	}
	return c.WaitNodes(ctx, func(nodes []swarm.Node) bool {
		ready := 0
		for _, n := range nodes {
			if n.Status.State == swarm.NodeStateReady {
				ready++
			}
		}
		return ready == len(c.Nodes)
	})
}

// WaitNodes polls the manager's node list until cond holds.
func (c *Cluster) WaitNodes(ctx context.Context, cond func([]swarm.Node) bool) error {
	for {
		nodes, err := c.Manager().NodeList(ctx, swarm.NodeListOptions{})
		if err == nil && cond(nodes) {
			return nil
		}
		if serr := sleep(ctx, 250*time.Millisecond); serr != nil {
			return fmt.Errorf("waiting for the nodes: %w (last list error: %v)", serr, err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Close removes the whole cluster: containers, daemons, namespaces,
// cgroups, mounts and directories. It may be called more than once.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	for _, n := range c.Nodes {
		if n.Client != nil {
			n.Client.Close()
		}
	}
	err := teardown(c.ID)
	// teardown signalled our own children; reap them.
	for _, n := range c.Nodes {
		if n.done != nil {
			select {
			case <-n.done:
			case <-time.After(5 * time.Second):
			}
		}
	}
	return err
}
