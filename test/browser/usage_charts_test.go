package browser

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// TestDashboard_UsageCharts deploys the web test image behind a route,
// with the gateway's /metrics published and the worker's sampler every
// 2 s ([worker] usage_sample_seconds), and watches the Overview's charts:
// the service's and the route's SVG charts appear once the sampler wrote
// a slot; then, while requests reach the route through the gateway and
// /burn keeps the service's CPU busy, the CPU and requests charts rise in
// place (the usage partial's htmx reload, never a page reload).
// Screenshots of the charts, light and dark, go to
// test-artifacts/dashboard; docs/screenshots/usage-charts-light.png is
// the light one.
func TestDashboard_UsageCharts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts slipway dev, Chromium and a Swarm deployment")
	}
	image := swarmtest.Image(t, "web")
	var envID string
	t.Cleanup(func() { removeEnvironment(t, envID) })
	id := swarmtest.ID()
	host := "browser-" + id + ".test"
	p, base, gatewayPort := devSession(t, "usage", id,
		"SLIPWAY_INGRESS_METRICS_ADDR=127.0.0.1:"+strconv.Itoa(freePort(t)),
		"SLIPWAY_INGRESS_METRICS_TOKEN_FILE="+metricsTokenFile(t),
		"SLIPWAY_WORKER_USAGE_SAMPLE_SECONDS=2",
	)
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	p.signup("Usage team")
	p.deploy("save and deploy", base, fmt.Sprintf(manifestTemplate, id, "", image, id))
	appPath := p.eval("read the application", `new URL(document.querySelector('[data-testid="tab-overview"]').href).pathname`)
	p.run("deployment succeeds", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)))
	p.run("environments", chromedp.Navigate(base+appPath+"/environments"), chromedp.WaitVisible(css(`[data-testid="environment-row"]`)))
	envID = p.eval("read the environment", `document.querySelector('[data-testid="environment-row"] form').getAttribute('action').split('/')[4]`)

	// A visitor's request through the gateway: the route is served, and
	// the gateway counts it, so the route gets a series.
	get := func(path string) error {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", gatewayPort, path), nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: status %d", path, res.StatusCode)
		}
		return nil
	}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		err := get("/")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the route is not served through the gateway: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The Overview loads the charts after the page, then htmx reloads
	// them every 15 s: the service's charts appear once the sampler wrote
	// a slot, the route's once it read the gateway twice.
	svc := `[data-testid="usage-service"][data-service="web"]`
	route := `[data-testid="usage-route"][data-route="` + host + `"]`
	p.run("overview", chromedp.Navigate(base+appPath), chromedp.WaitVisible(css(`[data-testid="usage"]`)))
	p.untilWithin("charts present", `(() => {
		const ok = (sel) => !!document.querySelector(sel + ' svg.chart-svg');
		return ok('`+svc+` [data-series="cpu"]') && ok('`+svc+` [data-series="memory"]') && ok('`+svc+` [data-series="network"]')
			&& ok('`+route+` [data-series="requests"]') && ok('`+route+` [data-series="p95"]');
	})()`, 3*time.Minute)
	p.run("charts before load", p.shot("30-usage-before-load"))
	before := p.eval("read the charts", `(() => {
		const f = (sel) => document.querySelector(sel);
		return [f('`+svc+` [data-series="cpu"]').dataset.last, f('`+route+` [data-series="requests"]').dataset.last].join(" ");
	})()`)
	// Marks: the window survives only if the page is never reloaded; the
	// usage element is replaced by each htmx reload.
	p.eval("mark the page", `(() => { window.__slipwayNoReload = "yes"; document.querySelector('[data-testid="usage"]').dataset.old = "yes"; return ""; })()`)

	// Load until the charts show it: /burn keeps a core of the service
	// busy for 300 ms a request, and / answers at once, both through the
	// gateway.
	loadCtx, stopLoad := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var loadErr error
	var once sync.Once
	for _, path := range []string{"/burn?ms=300", "/"} {
		wg.Go(func() {
			for loadCtx.Err() == nil {
				if err := get(path); err != nil {
					once.Do(func() { loadErr = err })
				}
				if path == "/" {
					time.Sleep(20 * time.Millisecond) // about 50 requests a second
				}
			}
		})
	}
	// The latest step of each chart: the route answers more than a
	// request a second and the service uses more than 0.1 cores, in a
	// usage element htmx swapped in.
	p.untilWithin("charts rise under load", `(() => {
		const u = document.querySelector('[data-testid="usage"]');
		const cpu = document.querySelector('`+svc+` [data-series="cpu"]');
		const req = document.querySelector('`+route+` [data-series="requests"]');
		return !!u && u.dataset.old !== "yes" && !!cpu && !!req && Number(cpu.dataset.last) > 0.1 && Number(req.dataset.last) > 1;
	})()`, 3*time.Minute)
	stopLoad()
	wg.Wait()
	if loadErr != nil {
		t.Errorf("a load request failed: %v", loadErr)
	}
	after := p.eval("read the charts", `(() => {
		const f = (sel) => document.querySelector(sel);
		return [f('`+svc+` [data-series="cpu"]').dataset.last, f('`+route+` [data-series="requests"]').dataset.last].join(" ");
	})()`)
	t.Logf("cpu cores and requests per second, latest step: before load %s, under load %s", before, after)
	if marker := p.eval("read the marker", `String(window.__slipwayNoReload)`); marker != "yes" {
		t.Fatal("the Overview reloaded; the charts must update in place")
	}
	if label := p.eval("read the label", `document.querySelector('`+svc+` [data-series="cpu"] svg').getAttribute('aria-label')`); !strings.HasPrefix(label, "CPU, latest ") {
		t.Errorf("the CPU chart's label %q does not say its latest value", label)
	}

	// The charts alone, light and dark: the light one is the docs'
	// picture (docs/screenshots/usage-charts-light.png).
	for _, scheme := range []string{"light", "dark"} {
		var buf []byte
		// A margin inside the element, so its shot keeps the cards' edges.
		p.eval("pad the charts", `(() => { document.querySelector('[data-testid="usage"]').style.padding = "8px"; return ""; })()`)
		p.run("charts in "+scheme, colorScheme(scheme), chromedp.ScrollIntoView(css(`[data-testid="usage"]`)),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				var err error
				buf, err = chromedp.Screenshot(css(`[data-testid="usage"]`))(ctx, tg)
				return err
			}))
		if err := os.WriteFile(filepath.Join(p.shots, "usage-charts-"+scheme+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// metricsTokenFile writes the bearer token of the gateway's /metrics to a
// file the gateway container can read (it is bind-mounted).
func metricsTokenFile(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "slipway-usage-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "gateway-metrics.token")
	if err := os.WriteFile(file, []byte("usage-"+swarmtest.ID()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
