package docker_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/docker/docker/api/types/network"

	"github.com/slipwayhq/slipway/runtime/docker"
)

// TestNetworkPrefixes: on the real engine, the subnets include the default
// bridge's and every network's IPAM subnet.
func TestNetworkPrefixes(t *testing.T) {
	t.Parallel()
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Ping(context.Background()); err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	got, err := docker.NetworkPrefixes(context.Background(), cli)
	if err != nil {
		t.Fatal(err)
	}
	bridge, err := cli.NetworkInspect(context.Background(), "bridge", network.InspectOptions{})
	if err != nil || len(bridge.IPAM.Config) == 0 {
		t.Fatalf("inspect bridge: %v", err)
	}
	want := netip.MustParsePrefix(bridge.IPAM.Config[0].Subnet)
	for _, p := range got {
		if p == want {
			return
		}
	}
	t.Fatalf("prefixes %v lack the default bridge's %s", got, want)
}
