package gatewayctl_test

import (
	"context"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"

	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// TestGateway_DisconnectFromAbsentNetwork: the teardown of an environment
// disconnects the gateway from its ingress network, which a preview
// without routes never had, and which a retried teardown already removed.
// The engine answers "is not connected to the network" for both; that
// counts as done, where it used to fail the teardown so the preview never
// finished deleting. The gateway here is a plain container on the real
// engine: the disconnect depends on its name and networks only.
func TestGateway_DisconnectFromAbsentNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Docker Swarm")
	}
	ctx := t.Context()
	cli := swarmtest.Client(t)
	label := swarmtest.Label(t)
	labels := map[string]string{swarmtest.LabelKey: label}
	id := swarmtest.ID()
	name := "slipway-gateway-disconnect-" + id
	created, err := cli.ContainerCreate(ctx, &container.Config{Image: swarmtest.Image(t, "web"), Labels: labels}, nil, nil, nil, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cli.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true}); err != nil {
			t.Errorf("remove %s: %v", name, err)
		}
	})
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	m := gatewayctl.New(cli, nil, name)

	if err := m.DisconnectNetwork(ctx, "slipway-ingress-never-made-"+id); err != nil {
		t.Errorf("disconnect from a network that never existed: %v", err)
	}

	// A network the gateway was on, then removed: disconnected, gone,
	// disconnected again.
	overlay := "slipway-ingress-gone-" + id
	if _, err := cli.NetworkCreate(ctx, overlay, network.CreateOptions{Driver: "overlay", Attachable: true, Labels: labels}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ConnectNetwork(ctx, overlay); err != nil {
		t.Fatal(err)
	}
	if err := m.DisconnectNetwork(ctx, overlay); err != nil {
		t.Fatalf("disconnect: %v", err)
	}
	if err := cli.NetworkRemove(ctx, overlay); err != nil {
		t.Fatal(err)
	}
	if err := m.DisconnectNetwork(ctx, overlay); err != nil {
		t.Errorf("disconnect from the removed network: %v", err)
	}
}
