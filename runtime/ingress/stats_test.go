package ingress

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/metrics"
)

const testMetricsToken = "gateway-metrics-token"

// TestGateway_Metrics sends requests through the gateway and reads them
// back from its /metrics listener: by route hostname (the wildcard as
// configured, not the request's host) and status, with their latency, and
// requests that matched no route as "unmatched". /metrics needs the token.
func TestGateway_Metrics(t *testing.T) {
	t.Parallel()
	dir := shortDir(t)
	pub := NewPublisher()
	pub.Wait = 2 * time.Second
	b := &testBundle{dir: dir, cp: startControlPlane(t, pub, filepath.Join(dir, "cp.sock")), resolver: &staticResolver{hosts: map[string][]string{}}}
	reg := metrics.New(nil)
	b.startWith(t, func(cfg *Config) { cfg.Metrics = reg })
	port := freePort(t)
	backend(t, "127.0.0.1", port, "metered")
	b.resolver.set("metered", "127.0.0.1")
	b.publish(t, 1,
		Route{Hostname: "*.metered.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "metered", Port: port}},
		Route{Hostname: "old.example.com", Visibility: VisibilityPublic, Redirect: &Redirect{To: "https://a.metered.example.com", Status: 301}},
	)
	scrape := func(auth string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+b.addrs.Metrics+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for i := 0; i < 3; i++ {
		if s, body, _ := get(t, b.addrs.HTTP, "a.metered.example.com", "/"); s != http.StatusOK || !strings.HasPrefix(body, "metered") {
			t.Fatalf("proxied request: %d %q", s, body)
		}
	}
	if s, _, _ := get(t, b.addrs.HTTP, "old.example.com", "/"); s != http.StatusMovedPermanently {
		t.Fatalf("redirect: %d", s)
	}
	if s, _, _ := get(t, b.addrs.HTTP, "nobody.example.com", "/"); s != http.StatusNotFound {
		t.Fatalf("unknown host: %d", s)
	}
	// Observed after the response is written: wait for the last one.
	var exposition string
	waitFor(t, func() bool {
		_, exposition = scrape("Bearer " + testMetricsToken)
		return strings.Contains(exposition, `slipway_gateway_requests_total{host="unmatched",status="404"} 1`)
	})
	for _, want := range []string{
		`slipway_gateway_requests_total{host="*.metered.example.com",status="200"} 3`,
		`slipway_gateway_requests_total{host="old.example.com",status="301"} 1`,
		`slipway_gateway_request_duration_seconds_count{host="*.metered.example.com"} 3`,
	} {
		if !strings.Contains(exposition, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(exposition, `host="a.metered.example.com"`) {
		t.Error("a request's own host became a label")
	}
	for _, auth := range []string{"", "Bearer wrong", testMetricsToken} {
		if s, body := scrape(auth); s != http.StatusUnauthorized || strings.Contains(body, "slipway_gateway") {
			t.Errorf("/metrics with Authorization %q: %d", auth, s)
		}
	}
}
