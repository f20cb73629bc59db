package proxyrig

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/runtime/ingress"
)

// Gateway is the real gateway running as its own process, fed by a
// Publisher over a unix socket as `slipway serve` feeds it.
type Gateway struct {
	*Process
	// HTTP and HTTPS are the bound listener addresses ("" when disabled).
	HTTP, HTTPS string
	pub         *ingress.Publisher
	cp          *http.Server
	dataDir     string
}

// GatewayOptions configure StartGateway.
type GatewayOptions struct {
	// Command runs the gateway (see GatewayCommand).
	Command []string
	// Dir holds the control socket and the data directory; keep its path
	// short (a unix socket path has at most 108 bytes).
	Dir string
	// CertDir is SLIPWAY_GATEWAY_CERT_DIR; empty disables HTTPS.
	CertDir string
	// Env is more KEY=VALUE settings for the gateway.
	Env []string
	// Table is published before the gateway starts.
	Table ingress.Table
}

// GatewayCommand returns the command that runs the gateway: `$SLIPWAY_BIN
// gateway` when SLIPWAY_BIN is set (what make test built), else a build of
// the test-only runtime/ingress/internal/testgateway into dir, which runs
// the gateway exactly as `slipway gateway` does without needing all of
// cmd/slipway to compile.
func GatewayCommand(dir string) ([]string, error) {
	if bin := os.Getenv("SLIPWAY_BIN"); bin != "" {
		return []string{bin, "gateway"}, nil
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	out := filepath.Join(dir, "testgateway")
	cmd := exec.Command("go", "build", "-o", out, "./runtime/ingress/internal/testgateway")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the gateway: %w: %s", err, b)
	}
	return []string{out}, nil
}

// StartGateway starts the gateway on 127.0.0.1 with ports chosen by the
// system, publishes o.Table and waits until the gateway stored it.
func StartGateway(ctx context.Context, o GatewayOptions) (*Gateway, error) {
	g := &Gateway{pub: ingress.NewPublisher(), dataDir: filepath.Join(o.Dir, "data")}
	if err := g.pub.Publish(o.Table); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	sock := filepath.Join(o.Dir, "cp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(ingress.RoutesPath, g.pub)
	mux.Handle(ingress.CertificatesPath, ingress.CertificateReceiver(func(context.Context, ingress.CertificateReport) error { return nil }))
	g.cp = &http.Server{Handler: mux}
	go g.cp.Serve(ln)

	env := []string{
		ingress.EnvListenHTTP + "=127.0.0.1:0",
		ingress.EnvListenHTTPS + "=",
		ingress.EnvControlSocket + "=" + sock,
		ingress.EnvDataDir + "=" + g.dataDir,
	}
	if o.CertDir != "" {
		env = append(env, ingress.EnvListenHTTPS+"=127.0.0.1:0", ingress.EnvCertDir+"="+o.CertDir)
	}
	lines := make(chan []byte, 64)
	out := &logBuffer{lines: lines}
	g.Process, err = start(o.Command[0], o.Command[1:], append(env, o.Env...), out)
	if err != nil {
		g.cp.Close()
		return nil, err
	}
	fail := func(err error) (*Gateway, error) {
		g.Stop()
		return nil, fmt.Errorf("gateway: %w\n%s", err, g.Output())
	}
	// The gateway logs its bound addresses once every listener is up.
	timeout := time.After(30 * time.Second)
	for g.HTTP == "" {
		select {
		case line := <-lines:
			var l struct{ Msg, HTTP, HTTPS string }
			if json.Unmarshal(line, &l) == nil && l.Msg == "gateway listening" {
				g.HTTP, g.HTTPS = l.HTTP, l.HTTPS
			}
		case <-g.done:
			return fail(fmt.Errorf("exited before listening"))
		case <-timeout:
			return fail(fmt.Errorf("no \"gateway listening\" log line within 30 s"))
		case <-ctx.Done():
			return fail(ctx.Err())
		}
	}
	out.mu.Lock()
	out.lines = nil
	out.mu.Unlock()
	if err := g.waitStored(ctx, o.Table.Version); err != nil {
		return fail(err)
	}
	return g, nil
}

func (g *Gateway) waitStored(ctx context.Context, version int64) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		t, err := ingress.LoadTable(filepath.Join(g.dataDir, "routes.json"))
		if err == nil && t.Version == version {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("route table version %d not stored: %w", version, ctx.Err())
		case <-g.done:
			return fmt.Errorf("exited")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop stops the gateway and its control plane.
func (g *Gateway) Stop() {
	g.Process.Stop()
	g.cp.Close()
}
