package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
)

// ui drives one browser tab through the dashboard, failing the test with
// a screenshot and the page's body when a step does not happen. who names
// the tab (its failure screenshot is forms-failed-<who>.png).
type ui struct {
	t     *testing.T
	ctx   context.Context
	shots string
	who   string
}

func (u *ui) fail(step string, err error) {
	u.t.Helper()
	html, _ := chromedp.Run(u.ctx, chromedp.OuterHTML(chromedp.CSS("body")))
	buf, serr := chromedp.Run(u.ctx, chromedp.FullScreenshot(80))
	if serr == nil {
		_ = os.WriteFile(filepath.Join(u.shots, "forms-failed-"+u.who+".png"), buf, 0o644)
	}
	u.t.Fatalf("%s: %s: %v\npage:\n%s", u.who, step, err, tail(html, 6000))
}

// run does the actions of one step within a deadline.
func (u *ui) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.ctx, 3*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, append([]chromedp.Action[chromedp.Void]{htmxSettled}, actions...)...); err != nil {
		u.fail(step, err)
	}
}

// htmxSettled waits until htmx has no request, swap or settle under way.
// htmx gives content it swapped in its behaviour only when it settles
// (20 ms later): a step that clicked a button as soon as it appeared
// would submit its form without htmx. Every step starts with it.
var htmxSettled = chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
	_, err := chromedp.Poll[bool](`document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added') === null`)(ctx, tg)
	return err
})

// eval reads a string from the page.
func (u *ui) eval(step, js string) string {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		u.fail(step, err)
	}
	return v
}

// text is the trimmed text of the first element matching sel ("" when none).
func (u *ui) text(sel string) string {
	u.t.Helper()
	return u.eval("read "+sel, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.textContent.replace(/\s+/g, " ").trim() : ""; })()`, sel))
}

// count is how many elements match sel.
func (u *ui) count(sel string) int {
	u.t.Helper()
	var n int
	fmt.Sscan(u.eval("count "+sel, fmt.Sprintf(`String(document.querySelectorAll(%q).length)`, sel)), &n)
	return n
}

// waitCount waits until n elements match sel, across the page being
// replaced by the one a form post leads to.
func (u *ui) waitCount(step, sel string, n int) {
	u.t.Helper()
	js := fmt.Sprintf(`String(document.readyState === "complete" ? document.querySelectorAll(%q).length : -1)`, sel)
	got := ""
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(u.ctx, 10*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		cancel()
		if err == nil && v == fmt.Sprint(n) {
			return
		}
		got = v
	}
	u.fail(step, fmt.Errorf("%s elements match %s, want %d", got, sel, n))
}

// wantText waits for sel to contain want, across the page being replaced
// by the one a form post leads to (a poll cut by that navigation is
// started again).
func (u *ui) wantText(step, sel, want string) {
	u.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.replace(/\s+/g, " ").includes(%q); })()`, sel, want)
	if err := u.poll(js); err != nil {
		u.fail(step, fmt.Errorf("%s does not say %q (it says %q): %w", sel, want, u.text(sel), err))
	}
}

// until waits for js to be true on a loaded page, across the page being
// replaced.
func (u *ui) until(step, js string) {
	u.t.Helper()
	if err := u.poll(js); err != nil {
		u.fail(step, fmt.Errorf("%s is not true at %s: %w", js, u.eval("read the location", `location.href`), err))
	}
}

// untilWithin polls js (a boolean expression) until it holds, for at
// most timeout.
func (u *ui) untilWithin(step, js string, timeout time.Duration) {
	u.t.Helper()
	if _, err := chromedp.Run(u.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(timeout))); err != nil {
		u.fail(step, err)
	}
}

// shot saves a screenshot of the whole page as name.png in the
// artifacts directory.
func (u *ui) shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		buf, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(u.shots, name+".png"), buf, 0o644)
	})
}

// poll waits up to a minute for js to be true on a loaded page (a poll
// cut by a navigation is started again).
func (u *ui) poll(js string) error {
	js = `document.readyState === "complete" && (` + js + `)`
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithDeadline(u.ctx, deadline)
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](js))
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

// invite makes an invitation for email with role from the Members page
// and returns its link.
func (u *ui) invite(base, email, role string) string {
	u.t.Helper()
	u.run("invite "+email,
		chromedp.Navigate(base+"/members"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="invite-form"] #f-email`), email),
		chromedp.SetValue(chromedp.CSS(`#invite-role`), role),
		chromedp.Click(chromedp.CSS(`[data-testid="invite-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="invite-link"]`)),
	)
	return u.text(`[data-testid="invite-link"] .secret-once`)
}

// join accepts the invitation link as a new user with email, in a browser
// context of its own (its own cookies) closed when the test ends, and
// returns the tab it is signed in on, named who.
func join(u *ui, invite, who, email string) *ui {
	u.t.Helper()
	ctx, cancel := chromedp.NewContext(u.ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(recordSubmissions))
	u.t.Cleanup(cancel)
	j := &ui{t: u.t, ctx: ctx, shots: u.shots, who: who}
	// A browser context keeps its first Run's context: start it without a deadline.
	if err := chromedp.Do(ctx, chromedp.Navigate(invite)); err != nil {
		u.t.Fatalf("open the invitation in a new browser context: %v", err)
	}
	j.run("accept the invitation",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="invitation-form"]`)),
		chromedp.SetValue(chromedp.CSS(`#f-email`), email),
		chromedp.SendKeys(chromedp.CSS(`#f-password`), "another horse battery staple"),
		chromedp.Click(chromedp.CSS(`[data-testid="invitation-accept"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="topbar"]`)),
	)
	return j
}

// TestDashboard_FormsThroughTheUI submits the dashboard's forms the way a
// person does, by clicking, as an owner and then as a viewer: create by
// name, the starter manifest, validation on input (a mouse paste sends
// no key), save, the header's Deploy on the real Swarm, variables, the
// .env editor, environments (create, rename, typed delete; declared ones
// disabled), setting up promotion, settings, invitations (the form that
// posted to a route that did not exist), tokens, the list's typed
// delete, secrets, restart, the password, a member's role, a second team
// and the switch back. Each answers with a visible message. The viewer sees no
// controls it may not use.
func TestDashboard_FormsThroughTheUI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts slipway dev, Chromium and a Swarm deployment")
	}
	image := swarmtest.Image(t, "web")
	var envID, stageEnvID string
	t.Cleanup(func() { removeEnvironment(t, envID) })
	t.Cleanup(func() { removeEnvironment(t, stageEnvID) })
	id := swarmtest.ID()
	gateway := "slipway-gw-forms-" + id
	cli := swarmtest.Client(t)
	t.Cleanup(func() { chaostest.RemoveGateway(t, cli, gateway) })
	// Notifications are delivered to a receiver on loopback.
	base, setupLink := startDev(t, gateway, freePort(t), "SLIPWAY_SECURITY_ALLOWED_OUTBOUND_NETWORKS=127.0.0.0/8")
	bctx, cancel := browserContext(t, "MAP *.test 127.0.0.1:1")
	defer cancel()
	o := &ui{t: t, ctx: bctx, shots: artifactsDir(t), who: "owner"}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	if err := chromedp.Do(bctx, chromedp.Navigate(setupLink)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	name := "forms-" + id

	o.run("sign up",
		chromedp.WaitVisible(css(`[data-testid="signup-form"]`)),
		chromedp.SendKeys(css(`#f-email`), "owner@example.com"),
		chromedp.SendKeys(css(`#f-password`), "correct horse battery staple"),
		chromedp.SendKeys(css(`#f-team`), "Forms team"),
		chromedp.Click(css(`[data-testid="signup-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="application-create-form"]`)),
	)
	if got := o.text(`[data-testid="apply-command"]`); !strings.Contains(got, "SLIPWAY_URL="+base) {
		t.Errorf("the empty state's snippet %q does not name %s", got, base)
	}

	o.run("create with just a name",
		chromedp.SendKeys(css(`#f-name`), name),
		chromedp.Click(css(`[data-testid="application-create"]`)),
		chromedp.WaitVisible(css(`[data-testid="starter-notice"]`)),
	)
	o.wantText("created flash", `[data-testid="flash"]`, "Created application "+name)
	if starter := o.eval("read the starter", `document.querySelector('#f-manifest').value`); !strings.Contains(starter, `name = "`+name+`"`) {
		t.Fatalf("the starter does not name the application:\n%s", starter)
	}

	// A paste fires input, not keyup: validation must follow it.
	manifest := fmt.Sprintf("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n\n[metadata]\nname = %q\n\n# The one service.\n[[spec.services]]\nname = \"web\"\nreplicas = 1\n\n[spec.services.source]\ntype = \"image\"\nimage = %q\n", name, image)
	paste := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => { const e = document.querySelector('#f-manifest'); e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); return "ok"; })()`, text)))
			return err
		})
	}
	o.run("paste a manifest with a mistake",
		paste(strings.Replace(manifest, "replicas = 1", "replicaz = 1", 1)),
		chromedp.WaitVisible(css(`[data-testid="manifest-error"][data-line="10"]`)),
	)
	o.run("paste the fixed manifest and save",
		paste(manifest),
		chromedp.WaitNotPresent(css(`[data-testid="manifest-error"]`)),
		chromedp.Click(css(`[data-testid="manifest-save"]`)),
		chromedp.WaitVisible(css(`[data-testid="pending-environment"][data-environment="production"]`)),
	)
	o.wantText("saved flash", `[data-testid="flash"]`, "Saved revision 1")
	o.wantText("saved flash says what next", `[data-testid="flash"]`, "not deployed yet")
	appPath := o.eval("read the application", `new URL(document.querySelector('[data-testid="tab-overview"]').href).pathname`)
	envID = strings.Split(o.eval("read the environment", `new URL(document.querySelector('[data-testid="header-deploy"]').form.action).pathname`), "/")[4]

	o.run("deploy from the header",
		chromedp.Click(css(`[data-testid="header-deploy"][data-environment="production"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"]`)),
	)
	o.wantText("deploy flash", `[data-testid="flash"]`, "Deploying production at revision 1")
	firstDeployment := o.eval("read the first deployment", `location.pathname`)
	o.run("deployment succeeds",
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)),
		chromedp.Navigate(base+appPath),
		chromedp.WaitVisible(css(`[data-testid="overview-services"]`)),
	)
	if o.count(`[data-testid="pending-environment"]`) != 0 {
		t.Errorf("production is still pending after its deployment")
	}

	o.run("set a variable",
		chromedp.Navigate(base+appPath+"/environments"),
		chromedp.SendKeys(css(`#var-name-production`), "greeting"),
		chromedp.SendKeys(css(`#var-value-production`), "hello"),
		chromedp.Click(css(`[data-scope="production"] [data-testid="variable-set"]`)),
		chromedp.WaitVisible(css(`[data-scope="production"] [data-name="greeting"] [data-testid="variable-unused"]`)),
	)
	o.wantText("variable notice", `[data-testid="environments-notice"]`, "Variable greeting set")
	o.wantText("pending again", `[data-testid="pending-environment"]`, "revision 2 is saved but not deployed")

	o.run("paste a .env",
		chromedp.SetValue(css(`#dotenv-web`), "# pasted\nGREETING=${{ vars.greeting }}\nLOG_LEVEL=info\n"),
		chromedp.Click(css(`[data-testid="service-environment-save"]`)),
		chromedp.WaitVisible(css(`[data-scope="production"] [data-name="greeting"] [data-testid="variable-used-by"]`)),
	)
	o.wantText(".env flash", `[data-testid="flash"]`, "Environment of web saved (2 variables)")
	o.run("see the TOML kept", chromedp.Navigate(base+appPath+"/manifest"), chromedp.WaitVisible(css(`#f-manifest`)))
	if src := o.eval("read the manifest", `document.querySelector('#f-manifest').value`); !strings.Contains(src, "# The one service.") || !strings.Contains(src, "[spec.services.environment]") || strings.HasPrefix(strings.TrimSpace(src), "{") {
		t.Errorf("after two field edits the manifest is:\n%s", src)
	}
	o.run("compare two revisions",
		chromedp.Click(css(`[data-testid="revision-diff-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="revision-diff"]`)),
	)

	o.run("set a variable to remove",
		chromedp.Navigate(base+appPath+"/environments"),
		chromedp.SendKeys(css(`#var-name-production`), "scratch"),
		chromedp.SendKeys(css(`#var-value-production`), "1"),
		chromedp.Click(css(`[data-scope="production"] [data-testid="variable-set"]`)),
		chromedp.WaitVisible(css(`[data-scope="production"] [data-name="scratch"] [data-testid="variable-unset"]`)),
	)
	o.run("remove it",
		acceptConfirms,
		chromedp.Click(css(`[data-scope="production"] [data-name="scratch"] [data-testid="variable-unset"]`)),
		chromedp.WaitNotPresent(css(`[data-scope="production"] [data-name="scratch"]`)),
	)
	o.wantText("unset notice", `[data-testid="environments-notice"]`, "Variable scratch removed.")

	o.run("create an environment",
		chromedp.Navigate(base+appPath+"/environments"),
		chromedp.Click(css(`[data-testid="environment-create"] summary`)),
		chromedp.SendKeys(css(`#create-env-name`), "qa"),
		chromedp.Click(css(`[data-testid="environment-create-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="environment-row"][data-environment="qa"]`)),
	)
	o.wantText("create notice", `[data-testid="environments-notice"]`, "Environment qa created")
	o.run("rename it",
		chromedp.Click(css(`[data-testid="environment-manage"][data-environment="qa"] summary`)),
		chromedp.SendKeys(css(`#rename-env-qa`), "qa2"),
		chromedp.Click(css(`[data-environment="qa"] [data-testid="environment-rename"]`)),
		chromedp.WaitVisible(css(`[data-testid="environment-row"][data-environment="qa2"]`)),
	)
	// production is declared: its rename and delete are disabled, look it
	// and say why.
	if got := o.eval("read the locked delete", `(() => { const b = document.querySelector('[data-environment="production"] [data-testid="environment-delete"]'); return b.disabled + " " + getComputedStyle(b).cursor + " " + document.getElementById(b.getAttribute('aria-describedby')).textContent; })()`); !strings.HasPrefix(got, "true not-allowed ") || !strings.Contains(got, "environment_declared") {
		t.Errorf("the declared environment's delete button: %q", got)
	}
	o.run("delete it by its typed name",
		chromedp.Click(css(`[data-testid="environment-manage"][data-environment="qa2"] summary`)),
		chromedp.SendKeys(css(`#delete-env-qa2`), "qa2"),
		chromedp.Click(css(`[data-environment="qa2"] [data-testid="environment-delete"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="environment-row"][data-environment="qa2"]`)),
	)
	o.wantText("delete flash", `[data-testid="flash"]`, "Environment qa2 deleted")

	o.run("settings of production",
		chromedp.Click(css(`[data-testid="environment-settings"][data-environment="production"] summary`)),
		chromedp.SetValue(css(`#rollback-production`), "manual"),
		chromedp.Click(css(`[data-environment="production"] [data-testid="environment-settings-save"]`)),
	)
	o.wantText("settings notice", `[data-testid="environments-notice"]`, "Settings of production saved")

	o.run("set up promotion",
		chromedp.Click(css(`[data-testid="environment-create"] summary`)),
		chromedp.SendKeys(css(`#create-env-name`), "stage"),
		chromedp.Click(css(`[data-testid="environment-create-submit"]`)),
		chromedp.WaitVisible(css(`[data-environment="stage"] [data-testid="environment-promote-setup"]`)),
		chromedp.Click(css(`[data-environment="stage"] [data-testid="environment-promote-setup"]`)),
		chromedp.WaitVisible(css(`[data-testid="promotion-source-form"]`)),
		chromedp.SetValue(css(`[data-testid="promotion-source-select"]`), "production"),
		chromedp.Click(css(`[data-testid="promotion-source-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="promotion-summary"]`)),
	)
	o.wantText("promotion flash", `[data-testid="flash"]`, "stage now receives releases promoted from production")
	o.wantText("promotion plan names the revision", `[data-testid="promotion-source"]`, "revision 1")

	o.run("rename the application",
		chromedp.Navigate(base+appPath+"/settings"),
		chromedp.SetValue(css(`#app-name`), name+"-x"),
		chromedp.Click(css(`[data-testid="application-rename"]`)),
		chromedp.WaitVisible(css(`[data-testid="settings-name"]`)),
	)
	o.wantText("rename flash", `[data-testid="flash"]`, "Renamed "+name+" to "+name+"-x")
	name += "-x"

	invite := o.invite(base, "viewer@example.com", "viewer")
	o.run("invite someone else and revoke it",
		chromedp.SetValue(css(`[data-testid="invite-form"] #f-email`), "other@example.com"),
		chromedp.Click(css(`[data-testid="invite-submit"]`)),
	)
	// The first invitation's link is still on the page until the post's
	// answer replaces it: wait for the list, not for a link.
	o.waitCount("second invitation listed", `[data-testid="invitation-row"]`, 2)
	o.run("revoke", chromedp.Click(css(`[data-testid="invitation-row"] form button`)))
	o.waitCount("revoked", `[data-testid="invitation-row"]`, 1)

	o.run("create a token",
		chromedp.Navigate(base+"/tokens"),
		chromedp.SendKeys(css(`#f-name`), "ci"),
		chromedp.Click(css(`[data-testid="token-create-form"] input[name="scopes"]`)),
		chromedp.Click(css(`[data-testid="token-create"]`)),
		chromedp.WaitVisible(css(`[data-testid="token-created"]`)),
	)
	o.run("revoke the token",
		acceptConfirms,
		chromedp.Click(css(`[data-testid="token-revoke"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="token-row"]`)),
	)

	// Secrets: a value is set (write-only: never put back into the page),
	// then deleted.
	o.run("set a secret",
		chromedp.Navigate(base+appPath+"/secrets"),
		chromedp.SendKeys(css(`[data-testid="secret-set-form"] #f-name`), "api-key"),
		chromedp.SendKeys(css(`[data-testid="secret-value"]`), "forms-secret-value"),
		chromedp.Click(css(`[data-testid="secret-set"]`)),
		chromedp.WaitVisible(css(`[data-testid="secret-row"][data-secret="api-key"]`)),
	)
	o.wantText("secret notice", `[data-testid="secrets-notice"]`, "Saved api-key as version 1")
	if strings.Contains(o.eval("read the secrets page", `document.documentElement.outerHTML`), "forms-secret-value") {
		t.Error("the Secrets tab shows the stored value")
	}
	o.run("let previews mount it",
		chromedp.Click(css(`[data-secret="api-key"] details:has([data-testid="secret-access-form"]) summary`)),
		chromedp.Click(css(`[data-secret="api-key"] [data-testid="secret-access-form"] input[name="previews"]`)),
		chromedp.Click(css(`[data-secret="api-key"] [data-testid="secret-access-save"]`)),
	)
	o.wantText("access notice", `[data-testid="secrets-notice"]`, "Updated who may mount api-key.")
	o.wantText("access listed", `[data-secret="api-key"] [data-testid="secret-access"]`, "preview")
	o.run("delete the secret",
		acceptConfirms,
		chromedp.Click(css(`[data-secret="api-key"] [data-testid="secret-delete"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="secret-row"][data-secret="api-key"]`)),
	)
	o.wantText("secret deleted", `[data-testid="secrets-notice"]`, "Deleted api-key")

	// Restart from the Overview lands on the service's logs, saying what
	// happens next.
	o.run("restart web",
		chromedp.Navigate(base+appPath),
		chromedp.Click(css(`[data-testid="service-restart"]`)),
		chromedp.WaitVisible(css(`[data-testid="service-logs-notice"]`)),
	)
	o.wantText("restart notice", `[data-testid="service-logs-notice"]`, "Restart requested")
	o.run("show more of the logs",
		chromedp.SetValue(css(`#logs-tail`), "500"),
		chromedp.Click(css(`[data-testid="service-logs-form"] button[type="submit"]`)),
	)
	o.until("the logs start 500 lines back", `new URLSearchParams(location.search).get("tail") === "500" && !!document.querySelector('[data-testid="service-logs-box"]')`)

	// A generated secret's declaration is a manifest edit: declared,
	// then removed.
	o.run("declare a generated secret",
		chromedp.Navigate(base+appPath+"/secrets"),
		chromedp.SendKeys(css(`#declare-name`), "session-key"),
		chromedp.Click(css(`[data-testid="declare-save"]`)),
		chromedp.WaitVisible(css(`[data-testid="declaration-row"][data-secret="session-key"]`)),
	)
	o.wantText("declared notice", `main`, "Generated secret session-key declared.")
	o.run("remove the declaration",
		acceptConfirms,
		chromedp.Click(css(`[data-secret="session-key"] [data-testid="declaration-remove"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="declaration-row"][data-secret="session-key"]`)),
	)
	o.wantText("removed notice", `main`, "Declaration of session-key removed")

	// Links: export web, then stop exporting it.
	o.run("export web",
		chromedp.Navigate(base+appPath+"/links"),
		chromedp.SendKeys(css(`#export-service`), "web"),
		chromedp.SendKeys(css(`#export-applications`), "forms-reader"),
		chromedp.Click(css(`[data-testid="export-set"]`)),
		chromedp.WaitVisible(css(`[data-testid="export-row"][data-service="web"]`)),
	)
	o.wantText("export notice", `main`, "web exported.")
	o.run("stop exporting web",
		acceptConfirms,
		chromedp.Click(css(`[data-testid="export-row"][data-service="web"] button[data-testid$="-remove"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="export-row"]`)),
	)
	o.wantText("unexport notice", `main`, "web no longer exported.")
	o.run("import another application's service",
		chromedp.SendKeys(css(`#import-application`), "forms-reader"),
		chromedp.SendKeys(css(`#import-service`), "api"),
		chromedp.Click(css(`[data-testid="import-set"]`)),
		chromedp.WaitVisible(css(`[data-testid="import-row"][data-application="forms-reader"][data-service="api"]`)),
	)
	o.wantText("import notice", `main`, "forms-reader/api imported.")
	o.run("stop importing it",
		acceptConfirms,
		chromedp.Click(css(`[data-testid="import-row"] [data-testid="imports-remove"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="import-row"]`)),
	)
	o.wantText("unimport notice", `main`, "forms-reader/api no longer imported.")

	// Scale from the Overview: a field edit and a deployment of production
	// on the real Swarm, which lands on its timeline.
	o.run("scale web to 2",
		chromedp.Navigate(base+appPath),
		chromedp.SetValue(css(`[data-testid="service-scale-replicas"]`), "2"),
		chromedp.Click(css(`[data-testid="service-scale"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"]`)),
	)
	o.wantText("scale flash", `[data-testid="flash"]`, "Scaled web in production to 2 replicas")
	o.run("scaled", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)))

	// Roll production back to its first deployment, exactly as it ran:
	// one replica again.
	o.run("roll back to the first deployment",
		chromedp.Navigate(base+firstDeployment),
		chromedp.WaitVisible(css(`[data-testid="deployment-restore"]`)),
		acceptConfirms,
		chromedp.Click(css(`[data-testid="deployment-restore"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"]`)),
	)
	o.wantText("rollback flash", `[data-testid="flash"]`, "Rolling production back to revision 1")
	o.run("rolled back",
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)),
		chromedp.Navigate(base+appPath),
		chromedp.WaitVisible(css(`[data-testid="service-replicas"]`)),
	)
	o.wantText("one replica again", `[data-testid="service-replicas"]`, "1/1")

	// Promote production's release to stage (set up above) from the
	// promote page's button.
	o.run("open the promotion",
		chromedp.Navigate(base+appPath+"/environments"),
		chromedp.Click(css(`[data-environment="stage"] [data-testid="environment-promote"]`)),
		chromedp.WaitVisible(css(`[data-testid="promotion-submit"]`)),
	)
	stageEnvID = strings.Split(o.eval("read stage's id", `location.pathname`), "/")[4]
	o.run("promote",
		acceptConfirms,
		chromedp.Click(css(`[data-testid="promotion-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"]`)),
	)
	o.wantText("promote flash", `[data-testid="flash"]`, "Promoting production's revision 1 to stage")
	o.run("promoted", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)))

	o.run("change the password",
		chromedp.Navigate(base+"/account"),
		chromedp.SendKeys(css(`#f-current_password`), "correct horse battery staple"),
		chromedp.SendKeys(css(`#f-new_password`), "a newer horse battery staple"),
		chromedp.Click(css(`[data-testid="password-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="password-notice"]`)),
	)
	o.wantText("password notice", `[data-testid="password-notice"]`, "Password changed")

	teamForms(o, base, image, name)

	v := join(o, invite, "viewer", "viewer@example.com")
	v.run("viewer's application page", chromedp.Navigate(base+appPath), chromedp.WaitVisible(css(`[data-testid="application-name"]`)))
	if v.count(`[data-testid="header-deploy"]`) != 0 || v.count(`[data-testid="pending-no-deploy"]`) != 1 {
		t.Errorf("the viewer sees a Deploy button, or no word on why it cannot deploy")
	}
	viewerWalk(v, base, appPath, firstDeployment, envID)
	// The owner makes the viewer a developer: the viewer's next page
	// offers Deploy.
	setRole := func(from, to string) {
		o.run("make the "+from+" a "+to,
			chromedp.Navigate(base+"/members"),
			chromedp.SetValue(css(`[data-testid="member-row"]:has(.badge-`+from+`) [data-testid="member-role-form"] select`), to),
			chromedp.Click(css(`[data-testid="member-row"]:has(.badge-`+from+`) [data-testid="member-role-form"] button`)),
			chromedp.WaitVisible(css(`[data-testid="member-row"]:has(.badge-`+to+`)`)),
		)
	}
	setRole("viewer", "developer")
	v.run("developer's application page", chromedp.Navigate(base+appPath), chromedp.WaitVisible(css(`[data-testid="header-deploy"]`)))

	// A form left on a page from a higher role answers clearly when the
	// role is gone: the developer's Environments tab stays open while the
	// owner makes them a viewer again, and its Set variable says why not.
	v.run("developer's environments", chromedp.Navigate(base+appPath+"/environments"), chromedp.WaitVisible(css(`[data-scope="production"] [data-testid="variable-set"]`)))
	setRole("developer", "viewer")
	v.run("set a variable as a viewer",
		chromedp.SendKeys(css(`#var-name-production`), "late"),
		chromedp.SendKeys(css(`#var-value-production`), "1"),
		chromedp.Click(css(`[data-scope="production"] [data-testid="variable-set"]`)),
	)
	v.wantText("forbidden", `[data-testid="flash"]`, "Your role (viewer) does not allow this")
	setRole("viewer", "developer")

	// The owner removes the developer from the team.
	o.run("remove the developer",
		chromedp.Navigate(base+"/members"),
		acceptConfirms,
		chromedp.Click(css(`[data-testid="member-row"]:has(.badge-developer) [data-testid="member-remove"]`)),
		chromedp.WaitNotPresent(css(`[data-testid="member-row"]:has(.badge-developer)`)),
	)
	o.wantText("removed member", `main`, "Saved.")

	// A second team, then back to the first through the switcher.
	o.run("create a team",
		chromedp.Navigate(base+"/account"),
		chromedp.SendKeys(css(`#f-team`), "Second team"),
		chromedp.Click(css(`[data-testid="team-create"]`)),
		chromedp.WaitVisible(css(`[data-testid="applications-empty"]`)),
	)
	o.wantText("in the new team", `[data-testid="current-team"]`, "Second team")
	o.run("switch back",
		chromedp.Click(css(`[data-testid="team-switcher"] summary`)),
		chromedp.Click(css(`[data-testid="team-switch-option"]:not([aria-current])`)),
		chromedp.WaitVisible(css(`[data-testid="application-row"]`)),
	)
	o.wantText("back in the first team", `[data-testid="current-team"]`, "Forms team")

	// The list deletes by typed name, as Settings does: a row's Delete…
	// loads its form; a wrong name deletes nothing and says so.
	o.run("the list", chromedp.Navigate(base+"/applications"), chromedp.WaitVisible(css(`[data-testid="application-delete-open"]`)))
	if o.count(`[data-testid="application-delete-form"]`) != 0 {
		t.Fatal("the list carries a delete form before Delete… is pressed")
	}
	o.run("open the list's delete",
		chromedp.Click(css(`[data-testid="application-delete-open"]`)),
		chromedp.SendKeys(css(`[data-testid="application-delete-confirm"]`), "not-it"),
		chromedp.Click(css(`[data-testid="application-delete"]`)),
	)
	o.wantText("wrong name refused", `[data-testid="flash"]`, "confirmation_mismatch")
	if o.count(`[data-testid="application-row"]`) != 1 {
		t.Fatal("a wrong typed name deleted the application")
	}
	o.run("delete by its name",
		chromedp.Click(css(`[data-testid="application-delete-open"]`)),
		chromedp.SendKeys(css(`[data-testid="application-delete-confirm"]`), name),
		chromedp.Click(css(`[data-testid="application-delete"]`)),
		chromedp.WaitVisible(css(`[data-testid="applications-empty"]`)),
	)
	o.wantText("deleted flash", `[data-testid="flash"]`, "Deleted application "+name)
	o.run("log out", chromedp.Click(css(`[data-testid="logout"]`)), chromedp.WaitVisible(css(`[data-testid="login-form"]`)))
	o.run("log in with the new password",
		chromedp.SendKeys(css(`#f-email`), "owner@example.com"),
		chromedp.SendKeys(css(`#f-password`), "a newer horse battery staple"),
		chromedp.Click(css(`[data-testid="login-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="topbar"]`)),
	)
}
