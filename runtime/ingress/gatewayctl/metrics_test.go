package gatewayctl_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/runtime/ingress"
)

// TestGateway_MetricsPublished: a gateway created with MetricsAddr and
// MetricsTokenFile publishes /metrics on that host address, answers a
// scrape with the token with per-route request counts, and refuses one
// without it.
func TestGateway_MetricsPublished(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	svc := "gwm-" + e.id + "-web"
	e.service(t, svc, 1, "metered")
	tokenDir, err := os.MkdirTemp("", "gwmetrics")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tokenDir) })
	const token = "gateway-metrics-0123456789"
	tokenFile := filepath.Join(tokenDir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e.cfg
	cfg.MetricsAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg.MetricsTokenFile = tokenFile
	if _, err := e.m.EnsureGateway(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.ConnectNetwork(ctx, e.overlay); err != nil {
		t.Fatal(err)
	}
	const host = "metered.example.com"
	e.publish(t, 1, ingress.Route{Hostname: host, Visibility: ingress.VisibilityPublic, Backend: &ingress.Backend{Service: svc, Port: 8080, Network: e.overlay}})
	eventually(t, "the route serves", 90*time.Second, expect(e.httpAddr, host, "/version", 200, "metered"))

	scrape := func(auth string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+cfg.MetricsAddr+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	eventually(t, "metrics count the route's requests", 30*time.Second, func() (bool, string) {
		status, body, err := scrape("Bearer " + token)
		ok := err == nil && status == 200 && strings.Contains(body, "slipway_gateway_requests_total") && strings.Contains(body, host)
		if len(body) > 300 {
			body = body[:300]
		}
		return ok, fmt.Sprintf("%d %v %q", status, err, body)
	})
	for _, auth := range []string{"", "Bearer wrong"} {
		if status, body, err := scrape(auth); err != nil || status != http.StatusUnauthorized || strings.Contains(body, host) {
			t.Errorf("scrape with Authorization %q: %d %v, want 401 without metrics", auth, status, err)
		}
	}
}
