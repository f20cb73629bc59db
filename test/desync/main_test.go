package desync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/test/proxyrig"
)

// The hostnames every proxy serves. Names under tls.desync.test have a
// certificate, so plain HTTP to them is answered with a 308 to HTTPS.
const (
	hostApp      = "app.plain.desync.test"      // the echo backend
	hostRedirect = "redirect.plain.desync.test" // a redirect route
	hostDead     = "dead.plain.desync.test"     // a backend nobody listens on: 502
	hostUnknown  = "unknown.plain.desync.test"  // no route: 404
	hostTLS      = "app.tls.desync.test"        // the echo backend, with a certificate
	redirectTo   = "https://elsewhere.desync.test"
)

// streamKinds and streamShapes make the poisoning cases: each pair has a
// host and a backend of its own per proxy, so the victim's request can
// only meet the connection the attacker's response left.
var (
	streamKinds  = []string{"chunked", "length", "sse"}
	streamShapes = []string{"loop", "handover", "tls", "h2"}
)

func streamHost(kind, shape string) string {
	zone := "plain"
	if shape == "tls" || shape == "h2" {
		zone = "tls"
	}
	return fmt.Sprintf("%s-%s.%s.desync.test", kind, shape, zone)
}

func hasCertificate(host string) bool { return strings.HasSuffix(host, ".tls.desync.test") }

// proxy is one reverse proxy under test with backends of its own.
type proxy struct {
	name string
	// skip says why this proxy's cases are skipped ("": they run).
	skip        string
	http, https string
	app         *backend            // behind hostApp and hostTLS
	streams     map[string]*backend // by host
	deadPort    int
	// output is the proxy's log so far, for failures.
	output func() string
}

// site is one hostname a proxy serves.
type site struct {
	host     string
	backend  *backend
	redirect string
	dead     bool
}

func (p *proxy) sites() []site {
	s := []site{
		{host: hostApp, backend: p.app},
		{host: hostTLS, backend: p.app},
		{host: hostRedirect, redirect: redirectTo},
		{host: hostDead, dead: true},
	}
	for _, kind := range streamKinds {
		for _, shape := range streamShapes {
			h := streamHost(kind, shape)
			s = append(s, site{host: h, backend: p.streams[h]})
		}
	}
	return s
}

func newProxy(name string) *proxy {
	p := &proxy{name: name, app: newBackend(), streams: map[string]*backend{}}
	for _, kind := range streamKinds {
		for _, shape := range streamShapes {
			p.streams[streamHost(kind, shape)] = newBackend()
		}
	}
	// Nobody listens there once the probe is closed.
	p.deadPort = proxyrig.FreePort()
	return p
}

func (p *proxy) close() {
	p.app.close()
	for _, b := range p.streams {
		b.close()
	}
}

// table is the gateway's route table for p's sites.
func (p *proxy) table() ingress.Table {
	t := ingress.Table{Version: 1}
	for _, s := range p.sites() {
		r := ingress.Route{Hostname: s.host, Visibility: ingress.VisibilityPublic}
		switch {
		case s.redirect != "":
			r.Redirect = &ingress.Redirect{To: s.redirect, Status: 308, PreservePath: true}
		case s.dead:
			r.Backend = &ingress.Backend{Service: "127.0.0.1", Port: p.deadPort}
		default:
			r.Backend = &ingress.Backend{Service: "127.0.0.1", Port: s.backend.port}
		}
		t.Routes = append(t.Routes, r)
	}
	return t
}

// nginxConfig serves p's sites as the gateway does, with the same
// limits, trusted peer and forwarding headers; nginx's own defaults
// otherwise, but one: like the gateway, nginx buffers a response only in
// memory (proxy_max_temp_file_size 0). Left to its default, it spools
// what a client does not take to a temporary file of up to 1 GiB, reading
// the backend all along, and every such read starts its send_timeout
// again: a client that reads nothing holds the backend connection until
// the file is full (TestSlowReader_CutOff).
func (p *proxy) nginxConfig(httpPort, httpsPort int, cert proxyrig.Certificate) string {
	var b strings.Builder
	fmt.Fprintf(&b, `
  map $remote_addr $desync_xff { %s $proxy_add_x_forwarded_for; default $remote_addr; }
  client_max_body_size %d;
  client_body_timeout %ds;
  send_timeout %ds;
  proxy_max_temp_file_size 0;
  keepalive_requests 1000000;
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host $host;
  proxy_set_header X-Forwarded-For $desync_xff;
  proxy_set_header X-Forwarded-Proto $scheme;
  proxy_set_header X-Forwarded-Host $host;
  proxy_set_header X-Real-IP $remote_addr;
  proxy_set_header Forwarded "";
  ssl_certificate %s;
  ssl_certificate_key %s;
  ssl_protocols TLSv1.3;
  server {
    listen 127.0.0.1:%d default_server;
    listen 127.0.0.1:%d ssl http2 default_server;
    return 404;
  }
`, trustedPeer, maxBody, int(bodyIdle.Seconds()), int(sendTimeout.Seconds()), cert.CertFile, cert.KeyFile, httpPort, httpsPort)
	for _, s := range p.sites() {
		var action string
		switch {
		case s.redirect != "":
			action = "return 308 " + s.redirect + "$request_uri;"
		case s.dead:
			action = fmt.Sprintf("location / { proxy_pass http://127.0.0.1:%d; }", p.deadPort)
		default:
			up := fmt.Sprintf("backend_%d", s.backend.port)
			if !strings.Contains(b.String(), "upstream "+up+" ") {
				fmt.Fprintf(&b, "  upstream %s { server 127.0.0.1:%d; keepalive 16; keepalive_requests 1000000; }\n", up, s.backend.port)
			}
			action = "location / { proxy_pass http://" + up + "; }"
		}
		if hasCertificate(s.host) {
			fmt.Fprintf(&b, "  server { listen 127.0.0.1:%d; server_name %s; return 308 https://$host$request_uri; }\n", httpPort, s.host)
			fmt.Fprintf(&b, "  server { listen 127.0.0.1:%d ssl http2; server_name %s; %s }\n", httpsPort, s.host, action)
		} else {
			fmt.Fprintf(&b, "  server { listen 127.0.0.1:%d; server_name %s; %s }\n", httpPort, s.host, action)
		}
	}
	return proxyrig.NginxConfig("2", b.String())
}

var (
	proxies []*proxy
	cert    proxyrig.Certificate
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "desync:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "desync")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	cert, err = proxyrig.WriteCertificate(filepath.Join(dir, "certs"), "desync", "*.tls.desync.test", "tls.desync.test")
	if err != nil {
		return 0, err
	}

	gw := newProxy("gateway")
	defer gw.close()
	cmd, err := proxyrig.GatewayCommand(dir)
	if err != nil {
		return 0, err
	}
	g, err := proxyrig.StartGateway(ctx, proxyrig.GatewayOptions{Command: cmd, Dir: filepath.Join(dir, "gw"), CertDir: cert.Dir, Env: gatewayEnv(), Table: gw.table()})
	if err != nil {
		return 0, err
	}
	defer g.Stop()
	gw.http, gw.https, gw.output = g.HTTP, g.HTTPS, g.Output
	proxies = append(proxies, gw)

	ng := newProxy("nginx")
	defer ng.close()
	proxies = append(proxies, ng)
	if _, err := proxyrig.LookPath("nginx"); err != nil {
		ng.skip = "nginx is not installed (scripts/prereqs.sh installs nginx-light)"
	} else {
		httpPort, httpsPort := proxyrig.FreePort(), proxyrig.FreePort()
		ng.http, ng.https = fmt.Sprintf("127.0.0.1:%d", httpPort), fmt.Sprintf("127.0.0.1:%d", httpsPort)
		n, err := proxyrig.StartNginx(ctx, filepath.Join(dir, "nginx"), ng.nginxConfig(httpPort, httpsPort, cert), ng.http, ng.https)
		if err != nil {
			return 0, err
		}
		defer n.Stop()
		ng.output = n.ErrorLog
	}
	for _, p := range proxies {
		if p.skip == "" {
			if err := p.warmUp(); err != nil {
				return 0, fmt.Errorf("%s: %w\n%s", p.name, err, p.output())
			}
		}
	}
	return m.Run(), nil
}

// warmUp waits until every backend route answers through p (the gateway
// resolves a backend set on its first request).
func (p *proxy) warmUp() error {
	for _, s := range p.sites() {
		if s.backend == nil {
			continue
		}
		via := "http"
		if hasCertificate(s.host) {
			via = "https"
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			r, err := p.get(via, s.host, "/echo/warm-up")
			if err == nil && r.status == 200 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s via %s: %v %v", s.host, via, r.status, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// forEachProxy runs f as a parallel subtest per proxy.
func forEachProxy(t *testing.T, f func(t *testing.T, p *proxy)) {
	for _, p := range proxies {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			if p.skip != "" {
				t.Skip(p.skip)
			}
			t.Cleanup(func() {
				if t.Failed() && p.output != nil {
					lines := strings.Split(p.output(), "\n")
					for i, l := range lines {
						if len(l) > 400 {
							lines[i] = l[:400] + "..."
						}
					}
					t.Logf("%s log (the last 40 lines, each cut at 400 bytes):\n%s", p.name, strings.Join(lines[max(0, len(lines)-40):], "\n"))
				}
			})
			f(t, p)
		})
	}
}
