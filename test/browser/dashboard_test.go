package browser

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/headless"
)

// The manifest the test types, first with a misspelt field on line 10.
const manifestTemplate = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "browser-%s"

[[spec.services]]
name = "web"
replicas = 1
%s
[spec.services.source]
type = "image"
image = "%s"

[[spec.routes]]
hostname = "browser-%s.test"
service = "web"
port = 8080
visibility = "public"
`

// TestDashboard_CreatePlanDeploy is the dashboard's whole first-use path:
// first-run signup, a manifest with a mistake whose error appears at its
// line, the fix, the plan, Save and deploy on the real Swarm, and the
// deployment timeline reaching "succeeded" with no page reload.
func TestDashboard_CreatePlanDeploy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts slipway dev, Chromium and a Swarm deployment")
	}
	image := swarmtest.Image(t, "web")
	// Registered before dev starts, so it runs after dev stopped: a running
	// Slipway would repair objects removed behind its back.
	var envID, qaEnvID string
	t.Cleanup(func() { removeEnvironment(t, envID) })
	t.Cleanup(func() { removeEnvironment(t, qaEnvID) })
	id := swarmtest.ID()
	gateway := "slipway-gw-browser-" + id
	cli := swarmtest.Client(t)
	t.Cleanup(func() { chaostest.RemoveGateway(t, cli, gateway) })
	gatewayPort := freePort(t)
	base, setupLink := startDev(t, gateway, gatewayPort)
	shots := artifactsDir(t)

	// Chromium resolves the routes' .test hostnames to the gateway's
	// published port, so the route link is followed as a user would.
	ctx, cancel := browserContext(t, fmt.Sprintf("MAP *.test 127.0.0.1:%d", gatewayPort))
	defer cancel()
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			buf, err := chromedp.FullScreenshot(100)(ctx, tg)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), buf, 0o644)
		})
	}
	fail := func(step string, err error) {
		t.Helper()
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		_ = chromedp.Do(ctx, shot("failed-"+strings.ReplaceAll(step, " ", "-")))
		t.Fatalf("%s: %v\npage main:\n%s", step, err, html)
	}
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		if err := chromedp.Do(tctx, actions...); err != nil {
			fail(step, err)
		}
	}
	// eval reads something from the page, failing the test as run does.
	eval := func(step, js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			fail(step, err)
		}
		return v
	}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }

	// Browsers keep the first Run's context for the browser's lifetime, so
	// start it without a timeout.
	// dev prints a setup link that carries the installation's setup token.
	if err := chromedp.Do(ctx, chromedp.Navigate(setupLink)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}

	bad := fmt.Sprintf(manifestTemplate, id, "replicaz = 2\n", image, id)
	good := fmt.Sprintf(manifestTemplate, id, "", image, id)

	run("first-run signup",
		chromedp.WaitVisible(css(`[data-testid="signup-form"]`)),
		chromedp.SendKeys(css(`#f-email`), "owner@example.com"),
		chromedp.SendKeys(css(`#f-password`), "correct horse battery staple"),
		chromedp.SendKeys(css(`#f-team`), "Browser team"),
		shot("01-signup"),
		chromedp.Click(css(`[data-testid="signup-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="manifest-form"]`)),
	)

	// Typing (a keyup after the text changed) validates through htmx.
	run("paste a manifest with a mistake",
		chromedp.SetValue(css(`#f-manifest`), strings.TrimSuffix(bad, "\n")),
		chromedp.SendKeys(css(`#f-manifest`), "\n"),
		chromedp.WaitVisible(css(`[data-testid="manifest-error"]`)),
		chromedp.WaitVisible(css(`[data-testid="gutter-error"][data-line="10"]`)),
		shot("02-error-at-line"),
	)
	if line := eval("read the error line", `document.querySelector('[data-testid="manifest-error"]').dataset.line`); line != "10" {
		t.Fatalf("the error is at line %q, want 10", line)
	}

	run("fix it and plan",
		chromedp.SetValue(css(`#f-manifest`), strings.TrimSuffix(good, "\n")),
		chromedp.SendKeys(css(`#f-manifest`), "\n"),
		chromedp.WaitNotPresent(css(`[data-testid="manifest-error"]`)),
		chromedp.Click(css(`[data-testid="manifest-plan"]`)),
		chromedp.WaitVisible(css(`[data-testid="plan"]`)),
		shot("03-plan"),
	)
	plan := eval("read the plan", `document.querySelector('[data-testid="plan"]').textContent`)
	for _, want := range []string{"+ services.web", "+ production"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("plan lacks %q:\n%s", want, plan)
		}
	}

	// After Save and deploy the browser lands on the deployment page; a
	// marker on window shows the page was never reloaded while the
	// timeline moved to succeeded.
	run("save and deploy",
		chromedp.Click(css(`[data-testid="manifest-save-deploy"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"]`)),
		shot("04-deploying"),
	)
	eval("mark the page", `window.__slipwayNoReload = "yes"`)
	appPath := eval("read the application", `new URL(document.querySelector('[data-testid="tab-overview"]').href).pathname`)
	// The Environments page names the environment's id in its Deploy form;
	// read it in a second tab so the deployment page stays untouched.
	tab, cancelTab := chromedp.NewContext(ctx)
	if err := chromedp.Do(tab, chromedp.Navigate(base+appPath+"/environments"), chromedp.WaitVisible(css(`[data-testid="environment-row"]`))); err != nil {
		cancelTab()
		fail("open the environments tab", err)
	}
	var err error
	envID, err = chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('[data-testid="environment-row"] form').getAttribute('action').split('/')[4]`))
	cancelTab()
	if err != nil || !strings.HasPrefix(envID, "env_") {
		t.Fatalf("environment id %q: %v", envID, err)
	}

	run("timeline reaches succeeded",
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)),
		shot("05-succeeded"),
	)
	if marker := eval("read the marker", `String(window.__slipwayNoReload)`); marker != "yes" {
		t.Fatal("the deployment page reloaded; the timeline must update in place")
	}
	steps := eval("read the steps", `Array.from(document.querySelectorAll('[data-testid="step"]')).map(s => s.dataset.step + "=" + s.dataset.state).join(" ")`)
	if !strings.Contains(steps, "rollout:web=succeeded") {
		t.Errorf("timeline steps %q lack a succeeded rollout of web", steps)
	}

	run("overview",
		chromedp.Click(css(`[data-testid="tab-overview"]`)),
		chromedp.WaitVisible(css(`[data-testid="overview-services"]`)),
		shot("06-overview"),
	)
	// dev reads what runs from Docker: one of one replica running.
	if replicas := eval("read the replicas", `document.querySelector('[data-testid="service-replicas"]').textContent.trim()`); !strings.HasPrefix(replicas, "1/1") {
		t.Errorf("overview replicas %q, want 1/1 running", replicas)
	}
	// The route link on the overview answers through the real gateway.
	link := eval("read the route link", `document.querySelector('[data-testid="route-link"]').href`)
	if want := "http://browser-" + id + ".test/"; link != want {
		t.Fatalf("route link %q, want %q", link, want)
	}
	overview := eval("remember the overview", `location.href`)
	// visit opens link until the service answers "ok" through the gateway.
	visit := func(step, link string) {
		t.Helper()
		var answer string
		for deadline := time.Now().Add(time.Minute); ; {
			if err = chromedp.Do(ctx, chromedp.Navigate(link)); err == nil {
				answer, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.trim()`))
			}
			if err == nil && answer == "ok" || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		if answer != "ok" {
			fail(step, fmt.Errorf("%s answered %q (%v), want the service's ok", link, answer, err))
		}
	}
	visit("follow the route link", link)
	run("route answered", shot("07-route"), chromedp.Navigate(overview), chromedp.WaitVisible(css(`[data-testid="overview-services"]`)))

	// A second environment of an application whose route names a literal
	// hostname: the create form gives it a hostname of its own (production
	// keeps its one), says which, and its deployment succeeds and answers
	// there.
	run("create qa",
		chromedp.Navigate(base+appPath+"/environments"),
		chromedp.Click(css(`[data-testid="environment-create"] summary`)),
		chromedp.WaitVisible(css(`[data-testid="environment-create-literal-hint"]`)),
		chromedp.SendKeys(css(`#create-env-name`), "qa"),
		chromedp.Click(css(`[data-testid="environment-create-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="environment-row"][data-environment="qa"]`)),
	)
	qaHost := "browser-" + id + "-qa.test"
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid="environments-notice"], [data-testid="flash"]'); return !!e && e.textContent.includes(%q); })()`, "Environment qa created with its own hostname "+qaHost),
		chromedp.WithPollingTimeout(time.Minute))); err != nil {
		fail("the create notice names qa's hostname", err)
	}
	// The header (with a Deploy button per pending environment) comes
	// with the next page.
	run("reload", chromedp.Navigate(base+appPath+"/environments"), chromedp.WaitVisible(css(`[data-testid="header-deploy"][data-environment="qa"]`)))
	qaEnvID = strings.Split(eval("read qa's id", `new URL(document.querySelector('[data-testid="header-deploy"][data-environment="qa"]').form.action).pathname`), "/")[4]
	run("deploy qa",
		chromedp.Click(css(`[data-testid="header-deploy"][data-environment="qa"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)),
		shot("07-qa-deployed"),
	)
	visit("qa answers on its own hostname", "http://"+qaHost+"/")
	visit("production still answers on its hostname", link)
	run("back to the overview", chromedp.Navigate(overview), chromedp.WaitVisible(css(`[data-testid="overview-services"]`)))
	// The service's output, read from Docker through the logs page: the
	// last lines, then new ones appended over its stream (the stream, pause
	// and pinning are TestDashboard_LogsAndDeployment's).
	run("service logs",
		chromedp.Click(css(`[data-testid="service-logs-link"]`)),
		chromedp.WaitVisible(css(`[data-testid="service-logs-box"]`)),
	)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const b = document.querySelector('[data-testid="service-logs-box"]'); return !!b && b.textContent.includes("listening on"); })()`,
		chromedp.WithPollingTimeout(time.Minute))); err != nil {
		fail("service output", err)
	}
	run("logs shown", shot("08-service-logs"))
	run("narrow screen",
		chromedp.EmulateViewport(375, 800),
		chromedp.Navigate(base+appPath+"/manifest"),
		chromedp.WaitVisible(css(`[data-testid="manifest-form"]`)),
		shot("09-manifest-375px"),
	)
	// The other tabs at 375 px: nothing wider than the screen (tables
	// scroll inside their own box).
	for i, tab := range []string{"environments", "previews", "links", "settings"} {
		run("narrow "+tab,
			chromedp.Navigate(base+appPath+"/"+tab),
			chromedp.WaitVisible(css(`[data-testid="tab-`+tab+`"][aria-current="page"]`)),
			shot(fmt.Sprintf("%02d-%s-375px", 10+i, tab)),
		)
		if w := eval("measure "+tab, `String(document.documentElement.scrollWidth)`); w != "375" {
			t.Errorf("%s is %s px wide at a 375 px viewport", tab, w)
		}
	}

	// Deleting from a filtered list answers with the list filtered the
	// same way: the only application gone, it says what it filtered by
	// instead of showing the first-use empty state.
	run("filtered list",
		chromedp.Navigate(base+"/applications?q=browser-"+id+"&state=running"),
		chromedp.WaitVisible(css(`[data-testid="application-row"]`)),
	)
	// The list guards deletion by the typed name, as Settings does: press
	// the row's Delete… (which loads the form), type the name, press
	// Delete application.
	run("delete from the filtered list",
		chromedp.Click(css(`[data-testid="application-delete-open"]`)),
		chromedp.SendKeys(css(`[data-testid="application-delete-confirm"]`), "browser-"+id),
		chromedp.Click(css(`[data-testid="application-delete"]`)),
		chromedp.WaitVisible(css(`[data-testid="applications-no-match"]`)),
		shot("14-deleted-filtered"),
	)
	if got := eval("read the answer", `document.querySelector('[data-testid="applications-no-match"]').textContent + " " + document.querySelector('[data-testid="application-search"]').value`); !strings.Contains(got, "browser-"+id) || !strings.Contains(got, "running") {
		t.Errorf("after the delete the list says %q, want the search and the state filter kept", got)
	}
}

// browserContext starts headless Chromium with a fresh profile, whose
// tab records what its forms submit (formCoverage).
func browserContext(t *testing.T, hostRules string) (context.Context, context.CancelFunc) {
	t.Helper()
	walked(t)
	return headless.Start(t, []chromedp.ExecAllocatorOption{
		chromedp.Flag("host-resolver-rules", hostRules),
		chromedp.WindowSize(1200, 900),
	}, chromedp.WithListener(recordSubmissions))
}

// artifactsDir is test-artifacts/dashboard at the repository root.
func artifactsDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "test-artifacts", "dashboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startDev runs `slipway dev` with a private Postgres in a temp dir and
// returns its base URL and the first-run setup link it prints (with the
// setup token); it is stopped with SIGINT when the test ends. env adds
// NAME=value settings to its environment.
func startDev(t *testing.T, gateway string, gatewayPort int, env ...string) (base, setupLink string) {
	t.Helper()
	bin := os.Getenv("SLIPWAY_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "slipway")
		build := exec.Command("go", "build", "-o", bin, "github.com/slipwayhq/slipway/cmd/slipway")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	dir, err := os.MkdirTemp("", "slipway-browser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// The private Postgres runs as the postgres user when we are root.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "dev", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SLIPWAY_IMAGES_PULL=false",
		"SLIPWAY_GATEWAY_NAME="+gateway,
		"SLIPWAY_GATEWAY_HTTP_PORT="+strconv.Itoa(gatewayPort),
		"SLIPWAY_GATEWAY_HTTPS_PORT=0",
	)
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(45 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("slipway dev stderr (tail):\n%s", tail(string(b), 6000))
			}
		}
	})
	urlRE := regexp.MustCompile(`running at (http://\S+)`)
	setupRE := regexp.MustCompile(`First run: open (http://\S+/setup\?token=\S+) `)
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				b, _ := os.ReadFile(logFile.Name())
				t.Fatalf("slipway dev exited early; stderr:\n%s", tail(string(b), 4000))
			}
			if m := urlRE.FindStringSubmatch(l); m != nil {
				base = m[1]
			}
			if m := setupRE.FindStringSubmatch(l); m != nil && base != "" {
				go func() {
					for range lines { // keep the pipe drained
					}
				}()
				return base, m[1]
			}
		case <-deadline:
			t.Fatal("slipway dev did not start in 2 minutes")
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// removeEnvironment deletes the Swarm objects the deployment made, found
// by the environment label every Slipway object carries, and fails the test
// if any is left.
func removeEnvironment(t *testing.T, envID string) {
	removeLabelled(t, "dev.slipway.env", "env_", envID)
}

// removeApplication is removeEnvironment for every environment (and
// preview) of an application, by its application label.
func removeApplication(t *testing.T, appID string) {
	removeLabelled(t, "dev.slipway.app", "app_", appID)
}

func removeLabelled(t *testing.T, label, prefix, id string) {
	if !strings.HasPrefix(id, prefix) {
		t.Logf("no id learned for %s (%q); nothing to clean up", label, id)
		return
	}
	cli, err := swarmtest.NewClient()
	if err != nil {
		t.Errorf("cleanup: %v", err)
		return
	}
	defer cli.Close()
	swarmtest.RemoveAndCheck(t, cli, label+"="+id)
}

// freePort is a TCP port nothing listens on at the moment.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
