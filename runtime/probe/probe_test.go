package probe_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/runtime/probe"
)

// binary returns a probe to run: freshly built from probe.c when musl-gcc
// is installed (so the test checks the source, not only the committed
// binary), else the embedded one.
func binary(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "probe")
	if _, err := exec.LookPath("musl-gcc"); err == nil {
		cmd := exec.Command("make", "-s", "OUT="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make: %v\n%s", err, b)
		}
		return out
	}
	t.Log("musl-gcc not installed: testing the committed binary")
	if err := os.WriteFile(out, probe.Binary, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBinary_Size(t *testing.T) {
	if n := len(probe.Binary); n == 0 || n >= probe.MaxSize {
		t.Fatalf("embedded probe is %d bytes; it must be non-empty and under %d", n, probe.MaxSize)
	}
	bin := binary(t)
	info, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() >= probe.MaxSize {
		t.Fatalf("built probe is %d bytes, over Swarm's config limit %d", info.Size(), probe.MaxSize)
	}
	t.Logf("probe: %d bytes built, %d bytes embedded", info.Size(), len(probe.Binary))
}

func TestProbe_HTTP(t *testing.T) {
	bin := binary(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/fail", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { time.Sleep(3 * time.Second) })
	mux.HandleFunc("/query", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "a=1" || r.Method != http.MethodGet {
			w.WriteHeader(400)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	// A port nothing listens on: bind one and close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()

	tests := []struct {
		name    string
		port    string
		path    string
		timeout string
		pass    bool
		reason  string
	}{
		{name: "2xx passes", port: port, path: "/ok", timeout: "2", pass: true},
		{name: "query string is sent", port: port, path: "/query?a=1", timeout: "2", pass: true},
		{name: "500 fails", port: port, path: "/fail", timeout: "2", reason: "status 500"},
		{name: "404 fails", port: port, path: "/missing", timeout: "2", reason: "status 404"},
		{name: "301 passes without following", port: port, path: "/moved", timeout: "2", pass: true},
		{name: "timeout fails", port: port, path: "/slow", timeout: "1", reason: "timed out"},
		{name: "connection refused fails", port: closedPort, path: "/ok", timeout: "2", reason: "refused"},
		{name: "bad port is refused", port: "0", path: "/ok", timeout: "2", reason: "invalid --port"},
		{name: "relative path is refused", port: port, path: "ok", timeout: "2", reason: "invalid --path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			cmd := exec.Command(bin, "http", "--port", tt.port, "--path", tt.path, "--timeout", tt.timeout)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if tt.pass {
				if err != nil {
					t.Fatalf("probe failed: %v: %s", err, stderr.String())
				}
				return
			}
			exit, ok := err.(*exec.ExitError)
			if !ok || exit.ExitCode() != 1 {
				t.Fatalf("want exit code 1, got %v (stderr %q)", err, stderr.String())
			}
			msg := stderr.String()
			if !strings.Contains(msg, tt.reason) || strings.Count(msg, "\n") != 1 {
				t.Fatalf("stderr %q: want one line containing %q", msg, tt.reason)
			}
			if tt.reason == "timed out" && time.Since(start) > 2500*time.Millisecond {
				t.Fatalf("a 1 s timeout took %v", time.Since(start))
			}
		})
	}
}

func TestHTTPTest(t *testing.T) {
	got := strings.Join(probe.HTTPTest(8080, "/health", 3), " ")
	if want := "CMD /run/slipway/probe http --port 8080 --path /health --timeout 3"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
