package browser

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
)

// The two-replica application of the logs test: an HTTP health check
// (10 s interval) keeps its first rollout running long enough to watch.
const logsManifest = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "%s"

[[spec.services]]
name = "web"
replicas = 2

[spec.services.source]
type = "image"
image = "%s"

[spec.services.healthcheck]
type = "http"
port = 8080

[[spec.routes]]
hostname = "%s.test"
service = "web"
port = 8080
visibility = "public"
`

// devSession runs slipway dev (startDev, with env) with a gateway named
// for prefix and id, removed when the test ends, and opens its first-run
// setup link in headless Chromium, which resolves *.test to the gateway.
func devSession(t *testing.T, prefix, id string, env ...string) (p *ui, base string, gatewayPort int) {
	t.Helper()
	gateway := "slipway-gw-" + prefix + "-" + id
	cli := swarmtest.Client(t)
	t.Cleanup(func() { chaostest.RemoveGateway(t, cli, gateway) })
	gatewayPort = freePort(t)
	base, setupLink := startDev(t, gateway, gatewayPort, env...)
	ctx, cancel := browserContext(t, fmt.Sprintf("MAP *.test 127.0.0.1:%d", gatewayPort))
	t.Cleanup(cancel) // before dev stops: cleanups run last first
	if err := chromedp.Do(ctx, chromedp.Navigate(setupLink)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &ui{t: t, ctx: ctx, shots: artifactsDir(t), who: prefix}, base, gatewayPort
}

// signup fills in the first-run signup form the setup link opens, for a
// team of that name, and waits for the first application's manifest form.
func (p *ui) signup(team string) {
	p.t.Helper()
	p.run("first-run signup",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="signup-form"]`)),
		chromedp.SendKeys(chromedp.CSS(`#f-email`), "owner@example.com"),
		chromedp.SendKeys(chromedp.CSS(`#f-password`), "correct horse battery staple"),
		chromedp.SendKeys(chromedp.CSS(`#f-team`), team),
		chromedp.Click(chromedp.CSS(`[data-testid="signup-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="manifest-form"]`)),
	)
}

// deploy pastes the manifest doc into the new application form, presses
// Save and deploy and waits for the deployment's timeline.
func (p *ui) deploy(step, base, doc string) {
	p.t.Helper()
	p.saveManifest(step, base+"/applications", doc, "manifest-save-deploy", `[data-testid="deployment-timeline"]`)
}

// saveManifest pastes the manifest doc into the manifest form at url
// (the new application form, or an application's Manifest tab), presses
// the button with data-testid button and waits for ready.
func (p *ui) saveManifest(step, url, doc, button, ready string) {
	p.t.Helper()
	p.run(step,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="manifest-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#f-manifest`), strings.TrimSuffix(doc, "\n")),
		chromedp.SendKeys(chromedp.CSS(`#f-manifest`), "\n"),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="manifest-error"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="`+button+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(ready)),
	)
}

// colorScheme emulates prefers-color-scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// TestDashboard_LogsAndDeployment deploys a two-replica service through
// the dashboard and watches what the issue found missing: the rollout's
// replica count while it runs, the Visit link and the live marker after,
// no Retry or Restore on a live success; log lines of both replicas
// labelled and merged by time, new lines appended (never a reload or a
// replacement), the box pinned to the bottom unless scrolled up, a pause
// that holds lines; and a deployment failed on a missing image whose
// failed step reads failed and which offers Retry, not Restore. Then every
// page passes axe-core's WCAG A/AA rules in light and dark mode, with
// screenshots of each.
func TestDashboard_LogsAndDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts slipway dev, Chromium and a Swarm deployment")
	}
	image := swarmtest.Image(t, "web")
	var envIDs []string
	t.Cleanup(func() {
		for _, id := range envIDs {
			removeEnvironment(t, id)
		}
	})
	id := swarmtest.ID()
	name := "logs-" + id
	p, base, gatewayPort := devSession(t, "logs", id)
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	// logLine makes the service write lines, through the gateway as a
	// visitor's request would reach it.
	logLine := func(text string, n int) {
		t.Helper()
		q := url.Values{"text": {text}}
		if n > 0 {
			q.Set("n", fmt.Sprint(n))
		}
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/log?%s", gatewayPort, q.Encode()), nil)
		req.Host = name + ".test"
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("make a log line: %v", err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("make a log line: status %d", res.StatusCode)
		}
	}

	p.signup("Logs team")
	if n := p.eval("read the checklist", `String(document.querySelectorAll('[data-testid="checklist-item"][data-done="false"]').length)`); n != "6" {
		t.Errorf("a new team's checklist has %s open steps, want 6", n)
	}
	deploy := func(step, doc string) { p.deploy(step, base, doc) }
	deploy("save and deploy two replicas", fmt.Sprintf(logsManifest, name, image, name))
	appPath := p.eval("read the application", `new URL(document.querySelector('[data-testid="tab-overview"]').href).pathname`)
	deployment := p.eval("read the deployment", `location.pathname`)

	// While web rolls out, its step shows how many replicas are healthy,
	// read from Docker, and updates in place.
	p.untilWithin("rollout shows replicas", `(() => { const s = document.querySelector('[data-step="rollout:web"] [data-testid="step-replicas"]'); return !!s && /^[0-2]\/2 healthy/.test(s.textContent.trim()); })()`, 3*time.Minute)
	p.run("rolling out", p.shot("20-rolling-out"))
	p.run("deployment succeeds", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)))
	if href := p.eval("read the visit link", `(document.querySelector('[data-testid="deployment-visit-link"]') || {}).href || ""`); href != "http://"+name+".test/" {
		t.Errorf("visit link %q, want the route", href)
	}
	if offered := p.eval("read the actions", `Array.from(document.querySelectorAll('[data-testid="deployment-retry"], [data-testid="deployment-restore"], [data-testid="deployment-cancel"]')).map(b => b.textContent).join(",")`); offered != "" {
		t.Errorf("a live, succeeded deployment offers %q", offered)
	}
	p.run("deployments list", chromedp.Navigate(base+appPath+"/deployments"), chromedp.WaitVisible(css(`[data-testid="deployment-row"]`)))
	if live := p.eval("read the live marker", `String(document.querySelectorAll('[data-testid="deployment-live"]').length)`); live != "1" {
		t.Errorf("%s deployments marked live, want 1", live)
	}
	p.run("environments", chromedp.Navigate(base+appPath+"/environments"), chromedp.WaitVisible(css(`[data-testid="environment-row"]`)))
	envIDs = append(envIDs, p.eval("read the environment", `document.querySelector('[data-testid="environment-row"] form').getAttribute('action').split('/')[4]`))

	// The logs page: both replicas' lines, labelled, in time order.
	logs := base + appPath + "/environments/production/services/web/logs"
	// Docker's log stream lags a little behind the containers: reload
	// until both replicas' first lines are there.
	bothTasks := `String((() => { const t = new Set(Array.from(document.querySelectorAll('[data-testid="log-line"]')).map(l => l.dataset.task)); return t.has("web.1") && t.has("web.2"); })())`
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		p.run("logs page", chromedp.Navigate(logs), chromedp.WaitVisible(css(`[data-testid="service-logs-box"]`)))
		if p.eval("read the tasks", bothTasks) == "true" {
			break
		}
		if time.Now().After(deadline) {
			p.fail("both replicas' lines", fmt.Errorf("the logs page lacks web.1 or web.2"))
		}
	}
	if sorted := p.eval("read the order", `(() => { const ts = Array.from(document.querySelectorAll('[data-testid="log-line"]')).map(l => l.dataset.ts); return String(ts.every((t, i) => i === 0 || ts[i-1] <= t)); })()`); sorted != "true" {
		t.Error("the lines are not in time order")
	}
	p.untilWithin("logs.js runs", `!document.querySelector('[data-testid="service-logs-pause"]').hidden`, 30*time.Second)
	p.eval("mark the page", `window.__noReload = "yes"; document.querySelector('[data-testid="log-line"]').__kept = "yes"; "ok"`)

	logLine("appended-"+id, 0)
	p.untilWithin("a new line is appended", `Array.from(document.querySelectorAll('[data-testid="log-line"]')).some(l => l.textContent.includes("appended-`+id+`"))`, time.Minute)
	if kept := p.eval("read the markers", `String(window.__noReload) + " " + String(document.querySelector('[data-testid="log-line"]').__kept)`); kept != "yes yes" {
		t.Fatalf("markers %q: the page reloaded or its lines were replaced instead of appended", kept)
	}

	// Pinned: a burst longer than the box keeps the newest line in view.
	logLine("bulk-"+id, 300)
	p.untilWithin("the burst arrives", `(() => { const l = document.querySelectorAll('[data-testid="log-line"]'); return Array.from(l).filter(x => x.textContent.includes("bulk-`+id+`")).length >= 300; })()`, time.Minute)
	p.untilWithin("pinned to the bottom", `(() => { const b = document.querySelector('[data-testid="service-logs-box"]'); return b.scrollHeight > b.clientHeight && b.scrollHeight - b.scrollTop - b.clientHeight < 4; })()`, 10*time.Second)
	p.run("pinned", p.shot("21-logs-pinned"))

	// Scrolled up, new lines do not move the view; a button offers them.
	p.eval("scroll up", `(() => { const b = document.querySelector('[data-testid="service-logs-box"]'); b.scrollTop = 0; b.dispatchEvent(new Event("scroll")); return "ok"; })()`)
	logLine("after-scroll-"+id, 0)
	p.untilWithin("the line arrives while scrolled up", `Array.from(document.querySelectorAll('[data-testid="log-line"]')).some(l => l.textContent.includes("after-scroll-`+id+`"))`, time.Minute)
	if state := p.eval("read the scroll", `(() => { const b = document.querySelector('[data-testid="service-logs-box"]'); return b.scrollTop + " " + document.querySelector('[data-testid="service-logs-jump"]').hidden; })()`); state != "0 false" {
		t.Errorf("scrolled up, a new line left scrollTop and jump-hidden %q, want 0 false", state)
	}

	// Pause holds new lines until resumed.
	p.run("pause", chromedp.Click(css(`[data-testid="service-logs-pause"]`)))
	if pressed := p.eval("read pause", `document.querySelector('[data-testid="service-logs-pause"]').getAttribute("aria-pressed")`); pressed != "true" {
		t.Fatalf("pause aria-pressed %q", pressed)
	}
	logLine("while-paused-"+id, 0)
	p.untilWithin("the paused line is held", `/1 new line held/.test(document.querySelector('[data-testid="service-logs-status"]').textContent)`, time.Minute)
	if shown := p.eval("read while paused", `String(Array.from(document.querySelectorAll('[data-testid="log-line"]')).some(l => l.textContent.includes("while-paused-`+id+`")))`); shown != "false" {
		t.Fatal("a line written while paused was shown")
	}
	p.run("paused", p.shot("22-logs-paused"), chromedp.Click(css(`[data-testid="service-logs-pause"]`)))
	p.untilWithin("resume shows the held line", `Array.from(document.querySelectorAll('[data-testid="log-line"]')).some(l => l.textContent.includes("while-paused-`+id+`"))`, 10*time.Second)

	// A deployment that fails on a missing image.
	missing := strings.Replace(strings.Replace(fmt.Sprintf(logsManifest, "missing-"+id, "slipway-test/missing:nope", "missing-"+id), "replicas = 2", "replicas = 1", 1), "[spec.services.healthcheck]\ntype = \"http\"\nport = 8080\n", "", 1)
	deploy("deploy a missing image", missing)
	failedAt := p.eval("read the failed deployment", `location.pathname`)
	p.run("it fails", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="failed"]`)), p.shot("23-failed-missing-image"))
	if st := p.eval("read the prepare step", `(document.querySelector('[data-step="prepare"]') || {dataset: {}}).dataset.state || ""`); st != "failed" {
		t.Errorf("the step the missing image stopped reads %q, want failed", st)
	}
	if offered := p.eval("read the failed actions", `Array.from(document.querySelectorAll('[data-testid="deployment-retry"], [data-testid="deployment-restore"], [data-testid="deployment-visit-link"]')).map(b => b.dataset.testid).join(",")`); offered != "deployment-retry" {
		t.Errorf("the failed deployment offers %q, want Retry alone", offered)
	}

	// Accessibility and screenshots of every page, light and dark.
	pages := []struct{ name, path, ready string }{
		{"applications", "/applications", `[data-testid="application-row"]`},
		{"overview", appPath, `[data-testid="overview-services"]`},
		{"deployments", appPath + "/deployments", `[data-testid="deployment-row"]`},
		{"deployment", deployment, `[data-testid="deployment-timeline"]`},
		{"deployment-failed", failedAt, `[data-testid="deployment-timeline"]`},
		{"logs", strings.TrimPrefix(logs, base), `[data-testid="log-line"]`},
		{"events", appPath + "/events", `[data-testid="event-row"]`},
		{"audit-log", "/events", `[data-testid="team-event-row"]`},
		{"members", "/members", `[data-testid="member-row"]`},
		{"tokens", "/tokens", `[data-testid="token-create-form"]`},
		{"account", "/account", `[data-testid="password-form"]`},
	}
	axe := axeSource(t)
	// The checker must be able to fail: an image without a text
	// alternative and grey-on-grey text are found.
	p.run("axe self-check", chromedp.Navigate(base+"/account"), chromedp.WaitVisible(css(`[data-testid="password-form"]`)))
	p.eval("break the page", `document.querySelector("main").insertAdjacentHTML("beforeend", '<img src="/static/none.png"><p class="muted" id="low-contrast">faint</p>'); document.getElementById("low-contrast").style.color = "#eeeeee"; "ok"`)
	if found := strings.Join(runAxe(t, p, axe), "\n"); !strings.Contains(found, "image-alt") || !strings.Contains(found, "color-contrast") {
		t.Fatalf("axe-core did not find the planted problems: %q", found)
	}
	var problems []string
	for _, scheme := range []string{"light", "dark"} {
		p.run("emulate "+scheme, colorScheme(scheme))
		for _, pg := range pages {
			p.run(pg.name+" "+scheme, chromedp.Navigate(base+pg.path), chromedp.WaitVisible(css(pg.ready)), p.shot("a11y-"+pg.name+"-"+scheme))
			if dark := p.eval("read the scheme", `String(matchMedia("(prefers-color-scheme: dark)").matches)`); dark != fmt.Sprint(scheme == "dark") {
				t.Fatalf("prefers-color-scheme is not %s", scheme)
			}
			for _, v := range runAxe(t, p, axe) {
				problems = append(problems, pg.name+" ("+scheme+"): "+v)
			}
		}
	}
	if len(problems) > 0 {
		t.Errorf("axe-core found %d accessibility problems:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

// axeSource is the vendored axe-core (testdata/axe, from npm).
func axeSource(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "testdata", "axe", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runAxe runs axe-core's WCAG 2.x A and AA rules on the current page and
// returns each violation as "rule (impact): target, …".
func runAxe(t *testing.T, p *ui, axe string) []string {
	t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](axe+";true")); err != nil {
		p.fail("inject axe-core", err)
	}
	out, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}, resultTypes: ["violations"]})
		.then(r => r.violations.map(v => v.id + " (" + v.impact + "): " + v.nodes.slice(0, 5).map(n => n.target.join(" ") + (n.failureSummary ? " [" + n.failureSummary.replace(/\s+/g, " ").slice(0, 200) + "]" : "")).join("; ")))`, chromedp.EvalAwaitPromise))
	if err != nil {
		p.fail("run axe-core", err)
	}
	return out
}
