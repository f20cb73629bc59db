package chaostest

import (
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// Gateway is a gateway container of the test's own, fed by whichever
// `slipway serve` listens on its socket directory.
type Gateway struct {
	Name      string
	SocketDir string
	// URL is the gateway's published HTTP listener.
	URL string
}

// StartGateway builds the gateway image from bin and runs a container
// named slipway-gw-chaos-<id> publishing a free port on 127.0.0.1, and
// removes it, its network and volume when the test ends. Register the
// environments' cleanups before calling it: the gateway holds their
// ingress overlays and must go first.
func StartGateway(t testing.TB, bin, id string) *Gateway {
	t.Helper()
	ctx := context.Background()
	cli := swarmtest.Client(t)
	dir, err := os.MkdirTemp("", "slw-gw-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	g := &Gateway{Name: "slipway-gw-chaos-" + id, SocketDir: dir}
	m := gatewayctl.New(cli, nil, g.Name)
	t.Cleanup(func() { RemoveGateway(t, cli, g.Name) })
	image, err := m.BuildDevImage(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	if _, err := m.EnsureGateway(ctx, gatewayctl.Config{
		Image: image, HostIP: "127.0.0.1", HTTPPort: port, SocketDir: dir, SocketName: "gateway.sock",
	}); err != nil {
		t.Fatal(err)
	}
	g.URL = "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	return g
}

// ServeEnv is what serve needs to feed the gateway, and worker to connect
// it to the environments' ingress overlays.
func (g *Gateway) ServeEnv() []string {
	return []string{"SLIPWAY_GATEWAY_SOCKET_DIR=" + g.SocketDir, "SLIPWAY_GATEWAY_NAME=" + g.Name}
}

// Get fetches / with the Host header host through the gateway.
func (g *Gateway) Get(c *http.Client, host string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, g.URL, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), err
}

// WaitServes waits until the gateway answers 200 "ok" for host.
func (g *Gateway) WaitServes(t testing.TB, host string, timeout time.Duration) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	var last string
	deadline := time.Now().Add(timeout)
	for {
		status, body, err := g.Get(c, host)
		if err == nil && status == http.StatusOK && body == "ok" {
			return
		}
		last = "status " + strconv.Itoa(status) + " body " + body
		if err != nil {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway never served %s in %s: last %s", host, timeout, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// RemoveGateway removes the gateway container name, its network and its
// volume (a gateway started by `slipway dev` or StartGateway).
func RemoveGateway(t testing.TB, cli *client.Client, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := gatewayctl.New(cli, nil, name).Remove(ctx); err != nil {
		t.Logf("cleanup gateway: %v", err)
	}
	if err := cli.NetworkRemove(ctx, name); err != nil && !cerrdefs.IsNotFound(err) {
		t.Logf("cleanup gateway network: %v", err)
	}
	if err := cli.VolumeRemove(ctx, name+"-data", true); err != nil && !cerrdefs.IsNotFound(err) {
		t.Logf("cleanup gateway volume: %v", err)
	}
}
