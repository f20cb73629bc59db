package gatewayctl_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// gatewayBinary returns a static binary whose `gateway` subcommand is the
// gateway: $SLIPWAY_BIN (what make test built), else a fresh build of
// cmd/slipway, else — when cmd/slipway does not compile at this moment,
// since many hands edit it — the test-only internal/testgateway.
func gatewayBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SLIPWAY_BIN"); bin != "" {
		return bin
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	out := filepath.Join(t.TempDir(), "slipway")
	var errs []string
	for _, pkg := range []string{"./cmd/slipway", "./runtime/ingress/internal/testgateway"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		b, err := cmd.CombinedOutput()
		if err == nil {
			return out
		}
		errs = append(errs, fmt.Sprintf("%s: %v: %s", pkg, err, b))
	}
	t.Fatalf("build gateway binary: %s", strings.Join(errs, "\n"))
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type controlPlane struct {
	pub    *ingress.Publisher
	socket string
	srv    *http.Server
}

func (cp *controlPlane) start(t *testing.T) {
	t.Helper()
	os.Remove(cp.socket)
	ln, err := net.Listen("unix", cp.socket)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(ingress.RoutesPath, cp.pub)
	// The certificate storage ACME uses, shared as serve shares it.
	certs := cp.socket + ".certs"
	mux.Handle(ingress.StoragePath, ingress.StorageHandler(&certmagic.FileStorage{Path: certs}, nil))
	t.Cleanup(func() { os.RemoveAll(certs) })
	cp.srv = &http.Server{Handler: mux}
	go cp.srv.Serve(ln)
}

type env struct {
	cli      *client.Client
	m        *gatewayctl.Manager
	labels   map[string]string
	id       string
	cp       *controlPlane
	cfg      gatewayctl.Config
	overlay  string
	web      string
	image    string
	bin      string
	httpAddr string
	private  string
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	cli := swarmtest.Client(t)
	label := swarmtest.Label(t)
	id := swarmtest.ID()
	e := &env{cli: cli, labels: map[string]string{swarmtest.LabelKey: label}, id: id}
	e.m = gatewayctl.New(cli, slog.Default(), "slipway-gateway-test-"+id)
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpLogs(t)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.m.Remove(ctx); err != nil {
			t.Logf("remove gateway: %v", err)
		}
		// The image goes after the container that uses it.
		if e.image != "" {
			if _, err := cli.ImageRemove(ctx, e.image, image.RemoveOptions{PruneChildren: true}); err != nil {
				t.Logf("remove gateway image: %v", err)
			}
		}
	})

	e.bin = gatewayBinary(t)
	tag, err := e.m.BuildDevImage(ctx, e.bin)
	if err != nil {
		t.Fatal(err)
	}
	e.image = tag
	e.web = swarmtest.Image(t, "web")

	sockDir, err := os.MkdirTemp("", "gwsock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	pub := ingress.NewPublisher()
	pub.Wait = 3 * time.Second
	e.cp = &controlPlane{pub: pub, socket: filepath.Join(sockDir, "gateway.sock")}
	e.cp.start(t)
	t.Cleanup(func() { e.cp.srv.Close() })

	overlay, err := cli.NetworkCreate(ctx, "gwt-"+id, network.CreateOptions{Driver: "overlay", Attachable: true, Labels: e.labels})
	if err != nil {
		t.Fatal(err)
	}
	e.overlay = "gwt-" + id
	_ = overlay

	httpPort, privatePort := freePort(t), freePort(t)
	e.cfg = gatewayctl.Config{
		Image:       tag,
		HostIP:      "127.0.0.1",
		HTTPPort:    httpPort,
		HTTPSPort:   0,
		PrivateAddr: fmt.Sprintf("127.0.0.1:%d", privatePort),
		SocketDir:   sockDir,
		Network:     "gwt-bridge-" + id,
		Labels:      e.labels,
	}
	e.httpAddr = fmt.Sprintf("127.0.0.1:%d", httpPort)
	e.private = e.cfg.PrivateAddr
	return e
}

func (e *env) dumpLogs(t *testing.T) {
	rc, err := e.cli.ContainerLogs(context.Background(), "slipway-gateway-test-"+e.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "200"})
	if err != nil {
		t.Logf("gateway logs: %v", err)
		return
	}
	defer rc.Close()
	var out bytes.Buffer
	stdcopy.StdCopy(&out, &out, rc)
	t.Logf("gateway logs:\n%s", out.String())
}

// service creates a dnsrr service of the web test image on the overlay.
func (e *env) service(t *testing.T, name string, replicas uint64, version string) string {
	t.Helper()
	spec := swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: name, Labels: e.labels},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{Image: e.web, Env: []string{"VERSION=" + version, "DRAIN_SECONDS=2"}, Labels: e.labels},
			Networks:      []swarm.NetworkAttachmentConfig{{Target: e.overlay}},
			RestartPolicy: &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionAny},
		},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
		UpdateConfig: &swarm.UpdateConfig{Parallelism: 1, Order: swarm.UpdateOrderStartFirst, Monitor: time.Second, FailureAction: swarm.UpdateFailureActionPause},
	}
	resp, err := e.cli.ServiceCreate(t.Context(), spec, swarm.ServiceCreateOptions{})
	if err != nil {
		t.Fatalf("create service %s: %v", name, err)
	}
	return resp.ID
}

func (e *env) publish(t *testing.T, version int64, routes ...ingress.Route) {
	t.Helper()
	if err := e.cp.pub.Publish(ingress.Table{Version: version, Routes: routes}); err != nil {
		t.Fatal(err)
	}
}

var httpClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       15 * time.Second,
	Transport:     &http.Transport{MaxIdleConnsPerHost: 16},
}

func get(addr, host, path string) (int, string, http.Header, error) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	req.Host = host
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), resp.Header, err
}

func eventually(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		if state != last {
			last = state
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %s)", what, timeout, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func expect(addr, host, path string, status int, body string) func() (bool, string) {
	return func() (bool, string) {
		s, b, _, err := get(addr, host, path)
		return err == nil && s == status && (body == "" || b == body), fmt.Sprintf("%d %q %v", s, b, err)
	}
}

func TestGateway_Swarm(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	notes := "gwt-" + e.id + "-notes"
	tenants := "gwt-" + e.id + "-tenants"
	secret := "gwt-" + e.id + "-secret"
	notesID := e.service(t, notes, 2, "notes-v1")
	e.service(t, tenants, 1, "tenants")
	e.service(t, secret, 1, "secret")

	first, err := e.m.EnsureGateway(ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ip, err := e.m.ConnectNetwork(ctx, e.overlay)
	if err != nil || net.ParseIP(ip) == nil {
		t.Fatalf("ConnectNetwork: %q %v", ip, err)
	}
	again, err := e.m.EnsureGateway(ctx, e.cfg)
	if err != nil || again != first {
		t.Fatalf("EnsureGateway is not idempotent: %s then %s (%v)", first, again, err)
	}
	if addrs, err := e.m.Addresses(ctx); err != nil || addrs[e.overlay] != ip {
		t.Fatalf("Addresses = %v %v, want %s on %s", addrs, err, ip, e.overlay)
	}

	route := func(host string, vis ingress.Visibility, svc string) ingress.Route {
		return ingress.Route{Hostname: host, Visibility: vis, Backend: &ingress.Backend{Service: svc, Port: 8080, Network: e.overlay}}
	}
	routes := []ingress.Route{
		route("notes.example.com", ingress.VisibilityPublic, notes),
		route("*.tenants.example.com", ingress.VisibilityPublic, tenants),
		route("admin.example.com", ingress.VisibilityPrivate, secret),
		{Hostname: "www.notes.example.com", Visibility: ingress.VisibilityPublic, Redirect: &ingress.Redirect{To: "https://notes.example.com", PreservePath: true}},
		{Hostname: "old.notes.example.com", Visibility: ingress.VisibilityPublic, Redirect: &ingress.Redirect{To: "https://notes.example.com/new", Status: 301}},
	}
	e.publish(t, 1, routes...)

	eventually(t, "exact host reaches notes", 90*time.Second, expect(e.httpAddr, "notes.example.com", "/version", 200, "notes-v1"))
	eventually(t, "wildcard host reaches tenants", 60*time.Second, expect(e.httpAddr, "acme.tenants.example.com", "/version", 200, "tenants"))
	eventually(t, "private host on the private listener", 60*time.Second, expect(e.private, "admin.example.com", "/version", 200, "secret"))

	t.Run("foreign and private hosts on the public port", func(t *testing.T) {
		for _, host := range []string{"notes.example.org", "a.b.tenants.example.com", "admin.example.com"} {
			if s, b, _, err := get(e.httpAddr, host, "/"); err != nil || s != 404 {
				t.Errorf("%s: %d %q %v, want 404", host, s, b, err)
			}
		}
	})
	t.Run("redirects", func(t *testing.T) {
		for _, tc := range []struct {
			host, location string
			status         int
		}{
			{"www.notes.example.com", "https://notes.example.com/p/q?r=1", 308},
			{"old.notes.example.com", "https://notes.example.com/new", 301},
		} {
			s, _, h, err := get(e.httpAddr, tc.host, "/p/q?r=1")
			if err != nil || s != tc.status || h.Get("Location") != tc.location {
				t.Errorf("%s: %d Location=%q %v, want %d %s", tc.host, s, h.Get("Location"), err, tc.status, tc.location)
			}
		}
	})
	t.Run("two replicas both receive traffic", func(t *testing.T) {
		eventually(t, "two distinct tasks answer", 60*time.Second, func() (bool, string) {
			seen := map[string]bool{}
			for range 20 {
				if s, b, _, err := get(e.httpAddr, "notes.example.com", "/whoami"); err == nil && s == 200 {
					seen[b] = true
				}
			}
			return len(seen) == 2, fmt.Sprint(seen)
		})
	})
	t.Run("services see the gateway's forwarded headers", func(t *testing.T) {
		// The web image echoes environment only; the header contract is
		// covered by the in-process tests. Here: the Host survives.
		if s, _, _, err := get(e.httpAddr, "NOTES.example.com:80", "/version"); err != nil || s != 200 {
			t.Fatalf("mixed-case host with port: %d %v", s, err)
		}
	})

	t.Run("start-first rollout under load has no errors", func(t *testing.T) {
		var ok, bad atomic.Int64
		var mu sync.Mutex
		var failures []string
		var v2 atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					s, b, _, err := get(e.httpAddr, "notes.example.com", "/version")
					if err != nil || s/100 != 2 {
						bad.Add(1)
						mu.Lock()
						if len(failures) < 10 {
							failures = append(failures, fmt.Sprintf("%d %q %v", s, b, err))
						}
						mu.Unlock()
						continue
					}
					ok.Add(1)
					if b == "notes-v2" {
						v2.Add(1)
					}
				}
			}()
		}
		time.Sleep(time.Second)
		svc, _, err := e.cli.ServiceInspectWithRaw(ctx, notesID, swarm.ServiceInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := svc.Spec
		spec.TaskTemplate.ContainerSpec.Env = []string{"VERSION=notes-v2", "DRAIN_SECONDS=2"}
		if _, err := e.cli.ServiceUpdate(ctx, notesID, svc.Version, spec, swarm.ServiceUpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "rollout completes", 3*time.Minute, func() (bool, string) {
			s, _, err := e.cli.ServiceInspectWithRaw(ctx, notesID, swarm.ServiceInspectOptions{})
			if err != nil || s.UpdateStatus == nil {
				return false, fmt.Sprint(err)
			}
			return s.UpdateStatus.State == swarm.UpdateStateCompleted, string(s.UpdateStatus.State)
		})
		// Keep the load on while the old tasks drain and leave DNS.
		time.Sleep(6 * time.Second)
		close(stop)
		wg.Wait()
		t.Logf("rollout: %d ok (%d from v2), %d failed", ok.Load(), v2.Load(), bad.Load())
		if bad.Load() != 0 || v2.Load() == 0 {
			t.Fatalf("%d failed requests during the rollout (want 0), %d answered by v2: %v", bad.Load(), v2.Load(), failures)
		}
	})

	t.Run("control plane down keeps the last table; back brings new routes", func(t *testing.T) {
		e.cp.srv.Close()
		time.Sleep(2 * time.Second)
		if s, b, _, err := get(e.httpAddr, "notes.example.com", "/version"); err != nil || s != 200 {
			t.Fatalf("with the control plane down: %d %q %v", s, b, err)
		}
		e.cp.start(t)
		e.publish(t, 2, append(routes, route("new.example.com", ingress.VisibilityPublic, notes))...)
		eventually(t, "new route appears", 60*time.Second, expect(e.httpAddr, "new.example.com", "/version", 200, "notes-v2"))
	})

	t.Run("a changed configuration replaces the container and keeps its overlays", func(t *testing.T) {
		cfg := e.cfg
		cfg.Env = map[string]string{ingress.EnvInternalCA: "true"}
		id, err := e.m.EnsureGateway(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if id == first {
			t.Fatal("EnsureGateway kept a container whose configuration changed")
		}
		// The new container starts from the table stored on its volume.
		eventually(t, "replaced gateway serves", 60*time.Second, expect(e.httpAddr, "new.example.com", "/version", 200, "notes-v2"))
		if err := e.m.DisconnectNetwork(ctx, e.overlay); err != nil {
			t.Fatal(err)
		}
		if err := e.m.DisconnectNetwork(ctx, e.overlay); err != nil {
			t.Fatalf("second disconnect: %v", err)
		}
	})
}
