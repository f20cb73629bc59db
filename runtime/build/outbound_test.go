package build

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/slipwayhq/slipway/outbound"
	rdocker "github.com/slipwayhq/slipway/runtime/docker"
	"github.com/slipwayhq/slipway/test/summary"
)

// counter is a TCP listener that counts connections and, when say is set,
// writes it to each before closing.
func counter(t *testing.T, addr, say string) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			if say != "" {
				_, _ = io.WriteString(c, say)
			}
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

func wantRefusedURL(t *testing.T, what string, err error, host string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != outbound.Code || e.Field != "url" {
		t.Fatalf("%s: %v, want %s on url", what, err, outbound.Code)
	}
	if !strings.Contains(e.Message, host) {
		t.Fatalf("%s: %q does not name %s", what, e.Message, host)
	}
}

// TestRemote_StrictPolicyRefusesLocalDestinations: with no allowance
// (serve and worker by default), every transport refuses a remote on
// loopback, by address or by name, for a listing and a checkout, before
// anything reaches the server; a real git server on loopback, reachable
// under dev's policy, proves the same URLs work when allowed.
func TestRemote_StrictPolicyRefusesLocalDestinations(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)
	var hits atomic.Int32
	base := serveGit(t, b.root, "", "")
	proxy := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, strings.TrimSuffix(base, "/git")+r.URL.Path+"?"+r.URL.RawQuery, http.StatusFound)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go proxy.Serve(ln)
	t.Cleanup(func() { proxy.Close() })
	tcp, tcpHits := counter(t, "127.0.0.1:0", "")
	_, httpPort, _ := net.SplitHostPort(ln.Addr().String())
	_, tcpPort, _ := net.SplitHostPort(tcp)
	key := sshKey(t)
	for _, tt := range []struct{ url, host string }{
		{"http://" + ln.Addr().String() + "/git/app.git", "127.0.0.1"},
		{"http://localhost:" + httpPort + "/git/app.git", "localhost"},
		{"https://localhost:" + httpPort + "/git/app.git", "localhost"},
		{"http://[::ffff:127.0.0.1]:" + httpPort + "/git/app.git", "127.0.0.1"},
		{"git://127.0.0.1:" + tcpPort + "/app.git", "127.0.0.1"},
		{"git://localhost:" + tcpPort + "/app.git", "localhost"},
		{"ssh://git@127.0.0.1:" + tcpPort + "/app.git", "127.0.0.1"},
		{"ssh://git@localhost:" + tcpPort + "/app.git", "localhost"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254"},
	} {
		auth := Auth{}
		if strings.HasPrefix(tt.url, "ssh:") {
			auth.SSHPrivateKey = key
		}
		_, err := ListHeads(t.Context(), tt.url, auth)
		wantRefusedURL(t, "list "+tt.url, err, tt.host)
		_, err = CheckoutRepository(t.Context(), CheckoutRequest{URL: tt.url, Branch: "main", Dir: t.TempDir(), Auth: auth})
		wantRefusedURL(t, "checkout "+tt.url, err, tt.host)
	}
	if n, m := hits.Load(), tcpHits.Load(); n != 0 || m != 0 {
		t.Fatalf("refused remotes were reached: %d HTTP requests, %d TCP connections", n, m)
	}
	// An allowed server (127.0.0.2 stands for a public one) redirecting
	// to a refused one: the redirect is dialled under the same policy.
	redirector := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+tcp+r.URL.Path, http.StatusFound)
	})}
	rl, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	go redirector.Serve(rl)
	t.Cleanup(func() { redirector.Close() })
	onlyPublic := outbound.New(outbound.Config{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	_, err = ListHeads(t.Context(), "http://"+rl.Addr().String()+"/app.git", Auth{Outbound: onlyPublic})
	wantRefusedURL(t, "redirect to loopback", err, "127.0.0.1")
	if n := tcpHits.Load(); n != 0 {
		t.Fatalf("a redirect reached the refused address %d times", n)
	}
	// Dev's policy reaches the real server, through the redirecting one.
	heads, err := ListHeads(t.Context(), "http://"+ln.Addr().String()+"/git/app.git", Auth{Outbound: loopback})
	if err != nil || heads["main"] != b.second {
		t.Fatalf("dev policy: heads %v, %v", heads, err)
	}
	summary.Line(t, "outbound: 9 tenant remotes on loopback, metadata and private addresses (http, https, git://, ssh, by address and by name) and a redirect refused with destination_not_allowed where they connect, 0 requests reached them; dev's policy reaches the same server")
}

// TestRemote_DNSRebinding: a remote's name answers with an allowed address
// first and with loopback afterwards. go-git's HTTP transport makes one
// connection per request; the first reaches the allowed address, the next
// is checked where it connects and refused, so the internal server on
// loopback never sees a request. git:// resolves once and connects to the
// checked address literally, so a changed answer cannot redirect it.
func TestRemote_DNSRebinding(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)
	base := serveGit(t, b.root, "", "")
	public := "127.0.0.2" // stands for a public address: allowed below
	var publicHits, internalHits atomic.Int32
	var port string
	// The git server answers on the allowed address; an "internal"
	// service holds the same port on 127.0.0.1.
	for _, ip := range []string{public, "127.0.0.1"} {
		addr := ip + ":0"
		if port != "" {
			addr = ip + ":" + port
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Skipf("cannot listen on %s: %v", addr, err)
		}
		_, port, _ = net.SplitHostPort(ln.Addr().String())
		count := &publicHits
		if ip == "127.0.0.1" {
			count = &internalHits
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			count.Add(1)
			res, err := http.DefaultTransport.RoundTrip(rewrite(r, base))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer res.Body.Close()
			for k, v := range res.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(res.StatusCode)
			_, _ = io.Copy(w, res.Body)
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	var lookups atomic.Int32
	p := outbound.New(outbound.Config{
		Allowed: []netip.Prefix{netip.MustParsePrefix(public + "/32")},
		Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
			if lookups.Add(1) == 1 {
				return []netip.Addr{netip.MustParseAddr(public)}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	})
	_, err := CheckoutRepository(t.Context(), CheckoutRequest{URL: "http://rebind.test:" + port + "/git/app.git", Branch: "main", Dir: t.TempDir(), Auth: Auth{Outbound: p}})
	wantRefusedURL(t, "checkout through a rebinding name", err, "rebind.test")
	if publicHits.Load() == 0 || internalHits.Load() != 0 {
		t.Fatalf("allowed address saw %d requests (want some), internal %d (want 0)", publicHits.Load(), internalHits.Load())
	}

	// git:// through the same kind of name: one resolution, then the
	// checked address.
	tcpPublic, publicConns := counter(t, public+":0", "")
	_, tcpPort, _ := net.SplitHostPort(tcpPublic)
	_, internalConns := counter(t, "127.0.0.1:"+tcpPort, "")
	lookups.Store(0)
	_, _ = ListHeads(t.Context(), "git://rebind.test:"+tcpPort+"/app.git", Auth{Outbound: p})
	if publicConns.Load() != 1 || internalConns.Load() != 0 {
		t.Fatalf("git:// reached the checked address %d times (want 1) and loopback %d times (want 0)", publicConns.Load(), internalConns.Load())
	}
	summary.Line(t, "outbound: DNS rebinding (a name answering public, then loopback) refused at connect over http and ssh, pinned to the checked address over git://; 0 requests reached loopback")
}

func rewrite(r *http.Request, base string) *http.Request {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	u := *r.URL
	u.Scheme, u.Host = "http", strings.TrimPrefix(base, "http://")[:strings.Index(strings.TrimPrefix(base, "http://"), "/")]
	out.URL = &u
	out.Host = u.Host
	return out
}

// TestRemote_ErrorsCarryNothingTheRemoteSent: whatever a remote answers
// (an HTTP error page, a status with a body, bytes on a git or ssh port),
// the error names the URL and the kind of failure but not the answer,
// which could be what an internal service said.
func TestRemote_ErrorsCarryNothingTheRemoteSent(t *testing.T) {
	t.Parallel()
	const secret = "INTERNAL-SERVICE-SAYS-db_password=hunter2"
	for _, status := range []int{401, 403, 404, 500, 200} {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, secret)
		})}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(ln)
		defer srv.Close()
		url := "http://" + ln.Addr().String() + "/app.git"
		_, err = ListHeads(t.Context(), url, Auth{Outbound: loopback})
		if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("HTTP %d: error %v carries the remote's body", status, err)
		}
		if ErrorCode(err) != CodeRepositoryUnreachable {
			t.Fatalf("HTTP %d: code %q", status, ErrorCode(err))
		}
		if status == 500 && !strings.Contains(err.Error(), "status "+strconv.Itoa(status)) {
			t.Fatalf("HTTP 500: error %v does not say the status", err)
		}
	}
	for _, scheme := range []string{"git", "ssh"} {
		addr, _ := counter(t, "127.0.0.1:0", "0032ERR "+secret+"\nSSH-2.0-"+secret+"\r\n")
		_, err := ListHeads(t.Context(), scheme+"://git@"+addr+"/app.git", Auth{Outbound: loopback, SSHPrivateKey: sshKey(t)})
		if scheme == "git" {
			_, err = ListHeads(t.Context(), scheme+"://"+addr+"/app.git", Auth{Outbound: loopback})
		}
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("%s: error %v carries what the remote sent", scheme, err)
		}
	}
}

// sshKey is a throwaway private key, so ssh remotes get as far as dialing
// (without one go-git asks the SSH agent first).
func sshKey(t *testing.T) []byte {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block)
}

// TestRemote_SSHDialChecked: go-git's ssh transport dials through the
// operation's policy where it connects: a name that passes the look-ahead
// and resolves to loopback when dialled is refused, and the listener
// sees nothing. Sets SSH_KNOWN_HOSTS (go-git reads it before dialing):
// not parallel.
func TestRemote_SSHDialChecked(t *testing.T) {
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_KNOWN_HOSTS", kh)
	addr, hits := counter(t, "127.0.0.1:0", "")
	_, port, _ := net.SplitHostPort(addr)
	var lookups atomic.Int32
	p := outbound.New(outbound.Config{Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}})
	_, err := ListHeads(t.Context(), "ssh://git@rebind.test:"+port+"/app.git", Auth{Outbound: p, SSHPrivateKey: sshKey(t)})
	wantRefusedURL(t, "ssh through a rebinding name", err, "rebind.test")
	if lookups.Load() < 2 || hits.Load() != 0 {
		t.Fatalf("lookups %d (want the dial's own), connections to loopback %d (want 0)", lookups.Load(), hits.Load())
	}
	// Dev's policy dials it (and fails on the handshake, which shows
	// nothing the listener sent).
	_, err = ListHeads(t.Context(), "ssh://git@"+addr+"/app.git", Auth{Outbound: loopback, SSHPrivateKey: sshKey(t)})
	if ErrorCode(err) != CodeRepositoryUnreachable || hits.Load() != 1 {
		t.Fatalf("dev policy over ssh: %v, %d connections; want repository_unreachable after one connection", err, hits.Load())
	}
}

func TestBaseImages(t *testing.T) {
	t.Parallel()
	df := `# syntax is ignored
ARG REGISTRY=docker.io
ARG TAG
FROM --platform=linux/amd64 ${REGISTRY}/library/golang:${TAG:-1.22} AS build
COPY --from=10.0.0.5:5000/tools:1 /bin/tool /bin/
FROM build AS test
FROM scratch
COPY --from=build /out /out
COPY --from=0 /x /x
FROM \
  ghcr.io/acme/base:1
FROM $UNSET/image
`
	got := baseImages([]byte(df), map[string]string{"REGISTRY": "127.0.0.1:5000"})
	want := []string{"127.0.0.1:5000/library/golang:1.22", "10.0.0.5:5000/tools:1", "ghcr.io/acme/base:1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("baseImages = %q, want %q", got, want)
	}
}

// TestBuild_BaseImageFromRefusedRegistry: on the real engine, a
// Dockerfile whose FROM (or COPY --from) image lives on a loopback
// registry is refused with destination_not_allowed on dockerfile before
// the daemon is asked to build, so the registry sees nothing; under dev's
// policy the daemon does try to pull it.
func TestBuild_BaseImageFromRefusedRegistry(t *testing.T) {
	t.Parallel()
	docker, err := rdocker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer docker.Close()
	if _, err := docker.Ping(t.Context()); err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	var hits atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r := newTestRepo(t, t.TempDir(), "app.git")
	r.write("Dockerfile", []byte("FROM scratch\nCOPY --from="+ln.Addr().String()+"/team/base:1 /x /x\n"), 0o644)
	r.commit("app")
	co := mustCheckout(t, CheckoutRequest{URL: r.url(), Branch: "main"})
	b := &Builder{Engine: docker, Installation: "test-outbound-" + randomID()}
	req := BuildRequest{Checkout: co, Owner: Owner{Team: "team-" + runID, App: "a", Env: "e"}, Timeout: time.Minute, Output: io.Discard}
	_, err = b.Build(t.Context(), req)
	var e *Error
	if !errors.As(err, &e) || e.Code != outbound.Code || e.Field != "dockerfile" || !strings.Contains(e.Message, ln.Addr().String()) {
		t.Fatalf("build from a loopback registry: %v, want %s on dockerfile naming the image", err, outbound.Code)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the refused registry saw %d requests", n)
	}
	req.Outbound = loopback
	if _, err = b.Build(t.Context(), req); ErrorCode(err) != CodeBuildFailed || hits.Load() == 0 {
		t.Fatalf("under dev's policy: %v after %d registry requests; want the daemon to try the registry and the build to fail", err, hits.Load())
	}
}
