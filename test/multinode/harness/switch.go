package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

// makeSwitch makes the switch namespace with its bridge, and the host
// link: a veth from the host into the bridge holding HostIP. The host
// routes only the cluster's switch subnet over it; the nodes have no
// default route, so nothing leaves the cluster.
func (c *Cluster) makeSwitch(ctx context.Context) error {
	// Choosing a free subnet and taking it must not interleave with
	// another cluster starting.
	unlock, err := lockRoot()
	if err != nil {
		return err
	}
	defer unlock()
	k, err := freeSubnet()
	if err != nil {
		return err
	}
	c.subnet = k
	c.HostIP = c.switchAddr(254)
	sw, br := c.prefix()+"-sw", c.prefix()+"br"
	hostEnd, switchEnd := c.prefix()+"h", c.prefix()+"hb"
	steps := [][]string{
		{"netns", "add", sw},
		{"-n", sw, "link", "set", "lo", "up"},
		{"-n", sw, "link", "add", br, "type", "bridge"},
		{"-n", sw, "addr", "add", c.switchAddr(1) + "/24", "dev", br},
		{"-n", sw, "link", "set", br, "up"},
		{"link", "add", hostEnd, "type", "veth", "peer", "name", switchEnd, "netns", sw},
		{"-n", sw, "link", "set", switchEnd, "master", br, "up"},
		{"addr", "add", c.HostIP + "/24", "dev", hostEnd},
		{"link", "set", hostEnd, "up"},
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			return err
		}
	}
	// The switch only bridges; it routes nothing.
	return sysctlIn(ctx, sw, "net.ipv4.ip_forward=0")
}

// lockRoot takes an exclusive lock shared by every cluster on the machine:
// a lock on the run directory itself, so it leaves no file behind.
func lockRoot() (func(), error) {
	if err := os.MkdirAll(runRoot, 0o711); err != nil {
		return nil, err
	}
	f, err := os.Open(runRoot)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// freeSubnet is the first k whose 10.230.k.0/24 no host interface uses.
func freeSubnet() (int, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return 0, err
	}
	used := map[int]bool{}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.To4() == nil {
			continue
		}
		v4 := ipn.IP.To4()
		if fmt.Sprintf("%d.%d", v4[0], v4[1]) == switchNet {
			used[int(v4[2])] = true
		}
	}
	for k := 1; k < 255; k++ {
		if !used[k] {
			return k, nil
		}
	}
	return 0, fmt.Errorf("no free %s.k.0/24 subnet for the switch", switchNet)
}

// hostLinks lists the host's interfaces named with prefix.
func hostLinks(prefix string) []string {
	ifs, _ := net.Interfaces()
	var out []string
	for _, i := range ifs {
		if strings.HasPrefix(i.Name, prefix) {
			out = append(out, i.Name)
		}
	}
	return out
}
