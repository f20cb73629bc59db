package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/slipwayhq/slipway/gatewayfeed"

	dockerimage "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/keyring/keyringtest"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestServeGateway_KeepsContainer: serve's gateway start
// (startServeGatewayFeed) creates the gateway container from [ingress],
// fed from its socket directory, joins it to the ingress overlay of an
// environment with deployed routes, and the route is served through it;
// with SLIPWAY_GATEWAY=off it serves the feed but creates no container.
// Not parallel: it sets SLIPWAY_GATEWAY_* variables.
func TestServeGateway_KeepsContainer(t *testing.T) {
	cli := swarmtest.Client(t)
	label := swarmtest.Label(t)
	id := swarmtest.ID()
	labels := map[string]string{swarmtest.LabelKey: label}
	st := storetest.NewSchema(t)
	ctx := t.Context()

	// An environment with a routed service on its ingress overlay.
	overlay := "gws-" + id + "-ingress"
	if _, err := cli.NetworkCreate(ctx, overlay, network.CreateOptions{Driver: "overlay", Attachable: true, Labels: labels}); err != nil {
		t.Fatal(err)
	}
	svc := "gws-" + id + "-web"
	replicas := uint64(1)
	if _, err := cli.ServiceCreate(ctx, swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: svc, Labels: labels},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{Image: swarmtest.Image(t, "web"), Env: []string{"VERSION=served-by-serve"}, Labels: labels},
			Networks:      []swarm.NetworkAttachmentConfig{{Target: overlay}},
		},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}, swarm.ServiceCreateOptions{}); err != nil {
		t.Fatal(err)
	}
	host := "gws-" + id + ".example.com"
	tenant := storetest.NewTenant(t, st, "gws", "notes")
	if err := st.SetEnvironmentRoutes(ctx, tenant.Team.ID, tenant.Env.ID, []store.DeployedRoute{
		{Hostname: host, Visibility: "public", Service: "web", BackendService: svc, BackendPort: 8080, BackendNetwork: overlay},
	}); err != nil {
		t.Fatal(err)
	}

	image, err := gatewayctl.New(cli, nil, "").BuildDevImage(ctx, staticSlipwayBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	// Runs after the gateway's removal below; a test still using the
	// image keeps it (the removal fails and is only logged).
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), image, dockerimage.RemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			t.Logf("remove gateway image: %v", err)
		}
	})
	cfg := config.Default()
	cfg.Ingress.Image, cfg.Ingress.HTTPPort, cfg.Ingress.HTTPSPort = image, freeTCPPort(t), 0
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	t.Run("SLIPWAY_GATEWAY=off", func(t *testing.T) {
		name := "slipway-gw-serve-off-" + id
		sockDir := gatewaySocketTempDir(t)
		t.Setenv(envGateway, "off")
		t.Setenv(envGatewayName, name)
		t.Setenv(envGatewaySocketDir, sockDir)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		startServeGatewayFeed(ctx, st, keyringtest.New(t), cfg, logger)
		if !fileExists(filepath.Join(sockDir, gatewayfeed.SocketName)) {
			t.Fatal("no route feed socket")
		}
		if _, err := cli.ContainerInspect(ctx, name); !cerrdefs.IsNotFound(err) {
			removeTestGateway(t, cli, name)
			t.Fatalf("SLIPWAY_GATEWAY=off: gateway container inspect = %v, want not found", err)
		}
	})

	name := "slipway-gw-serve-" + id
	sockDir := gatewaySocketTempDir(t)
	t.Setenv(envGatewayName, name)
	t.Setenv(envGatewaySocketDir, sockDir)
	serveCtx, stopServe := context.WithCancel(ctx)
	// Registered after swarmtest.Label's cleanup, so it runs first: the
	// gateway holds the overlay.
	t.Cleanup(func() {
		stopServe()
		removeTestGateway(t, cli, name)
	})
	startServeGatewayFeed(serveCtx, st, keyringtest.New(t), cfg, logger)

	c, err := cli.ContainerInspect(ctx, name)
	if err != nil {
		t.Fatalf("serve created no gateway container: %v", err)
	}
	if _, on := c.NetworkSettings.Networks[overlay]; !on || !c.State.Running {
		t.Fatalf("gateway running %v, networks %v; want it on %s", c.State.Running, c.NetworkSettings.Networks, overlay)
	}
	mounted := false
	for _, m := range c.Mounts {
		mounted = mounted || m.Source == sockDir
	}
	if !mounted {
		t.Fatalf("the socket directory %s is not mounted: %+v", sockDir, c.Mounts)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/version", cfg.Ingress.HTTPPort)
	var last string
	deadline := time.Now().Add(90 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = fmt.Sprintf("%d %q", resp.StatusCode, strings.TrimSpace(string(b)))
			if resp.StatusCode == http.StatusOK && strings.TrimSpace(string(b)) == "served-by-serve" {
				break
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the route is not served through serve's gateway: %s", last)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// staticSlipwayBinary is SLIPWAY_BIN, or a static build of this command
// (the gateway image is FROM scratch).
func staticSlipwayBinary(t *testing.T) string {
	t.Helper()
	if os.Getenv("SLIPWAY_BIN") == "" {
		t.Setenv("CGO_ENABLED", "0")
	}
	return slipwayBinary(t)
}

// gatewaySocketTempDir is a directory for gateway.sock under /tmp, whose
// short path leaves room for the socket's name.
func gatewaySocketTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gws")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// removeTestGateway removes the gateway container name, its bridge network
// and data volume. The supervisor's context is done by now, but a check
// it had under way may still create the container: remove until it stays
// gone.
func removeTestGateway(t *testing.T, cli *client.Client, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := gatewayctl.New(cli, nil, name)
	for range 3 {
		if err := m.Remove(ctx); err != nil {
			t.Logf("remove gateway: %v", err)
		}
		time.Sleep(time.Second)
		if _, err := cli.ContainerInspect(ctx, name); cerrdefs.IsNotFound(err) {
			break
		}
	}
	if err := cli.NetworkRemove(ctx, name); err != nil && !cerrdefs.IsNotFound(err) {
		t.Logf("remove gateway network: %v", err)
	}
	if err := cli.VolumeRemove(ctx, name+"-data", true); err != nil && !cerrdefs.IsNotFound(err) {
		t.Logf("remove gateway volume: %v", err)
	}
}
