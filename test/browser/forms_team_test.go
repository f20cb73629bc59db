package browser

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/slipwayhq/slipway/views/viewstest"
)

// teamForms clicks the team's own pages as the owner, for
// TestDashboard_FormsThroughTheUI: a webhook destination added, tested
// (delivered to a receiver here), changed and deleted; registry
// credentials saved and deleted; a Compose file translated, created as an
// application and that application deleted from its Settings by its typed
// name; the audit log's, an application's events', the list's and the
// header's search forms. app is an application of the team.
func teamForms(o *ui, base, image, app string) {
	o.t.Helper()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	received := make(chan string, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case received <- string(b):
		default:
		}
	}))
	o.t.Cleanup(hook.Close)
	dest := `[data-testid="destination"][data-name="ops-hook"]`
	o.run("add a webhook",
		chromedp.Navigate(base+"/notifications"),
		chromedp.SendKeys(css(`[data-testid="destination-form"] #f-name`), "ops-hook"),
		chromedp.SetValue(css(`#f-kind`), "webhook"),
		chromedp.SendKeys(css(`[data-testid="destination-form"] #f-url`), hook.URL+"/slipway"),
		chromedp.Click(css(`[data-testid="destination-create"]`)),
		chromedp.WaitVisible(css(dest)),
	)
	o.wantText("added notice", `main`, "Destination ops-hook added.")
	o.run("send a test",
		chromedp.Click(css(dest+` [data-testid="destination-test"]`)),
		chromedp.WaitVisible(css(dest+` [data-testid="delivery"][data-status="delivered"]`)),
	)
	if body := <-received; !strings.Contains(body, "test") {
		o.t.Errorf("the receiver got %q, not a test message", body)
	}
	o.run("disable it",
		chromedp.Click(css(dest+` details summary`)),
		chromedp.Click(css(dest+` [data-testid="destination-edit-form"] input[name="enabled"]`)),
		chromedp.Click(css(dest+` [data-testid="destination-save"]`)),
	)
	o.wantText("saved notice", `main`, "Destination saved.")
	o.wantText("disabled badge", dest+` [data-testid="destination-state"]`, "disabled")
	o.run("delete it",
		chromedp.Click(css(dest+` [data-testid="destination-delete"]`)),
		chromedp.WaitVisible(css(`[data-testid="destinations-empty"]`)),
	)
	o.wantText("deleted notice", `main`, "Destination deleted.")

	const registry = "registry.example.com:5000"
	row := `[data-testid="registry-credential-row"][data-host="` + registry + `"]`
	o.run("save registry credentials",
		chromedp.Navigate(base+"/registry-credentials"),
		chromedp.SendKeys(css(`[data-testid="registry-credential-form"] #f-host`), registry),
		chromedp.SendKeys(css(`[data-testid="registry-credential-form"] #f-username`), "deployer"),
		chromedp.SendKeys(css(`[data-testid="registry-credential-form"] #f-password`), "registry-token-value"),
		chromedp.Click(css(`[data-testid="registry-credential-save"]`)),
		chromedp.WaitVisible(css(row)),
	)
	o.wantText("credentials notice", `main`, "Saved the credentials for "+registry+".")
	if strings.Contains(o.eval("read the credentials page", `document.documentElement.outerHTML`), "registry-token-value") {
		o.t.Error("the registry credentials page shows the password")
	}
	o.run("delete the credentials",
		acceptConfirms,
		chromedp.Click(css(row+` [data-testid="registry-credential-delete"]`)),
		chromedp.WaitNotPresent(css(row)),
	)
	o.wantText("credentials deleted", `main`, "Deleted the credentials for "+registry+".")

	imported := app + "-imp"
	o.run("translate a Compose file",
		chromedp.Navigate(base+"/applications/import"),
		chromedp.SetValue(css(`#f-from`), "compose"),
		chromedp.SetValue(css(`#f-source`), "services:\n  web:\n    image: "+image+"\n"),
		chromedp.SendKeys(css(`[data-testid="import-form"] #f-name`), imported),
		chromedp.Click(css(`[data-testid="import-preview"]`)),
		chromedp.WaitVisible(css(`[data-testid="import-result"][data-valid="true"]`)),
	)
	o.run("create it", chromedp.Click(css(`[data-testid="import-create"]`)), chromedp.WaitVisible(css(`[data-testid="tab-settings"]`)))
	o.wantText("import flash", `[data-testid="flash"]`, "Imported from Docker Compose. Created application "+imported+" from revision 1.")
	o.run("delete it from its Settings by its name",
		chromedp.Click(css(`[data-testid="tab-settings"]`)),
		chromedp.SendKeys(css(`#delete-confirm`), imported),
		chromedp.Click(css(`[data-testid="application-delete-confirmed"]`)),
		chromedp.WaitVisible(css(`[data-testid="application-row"]`)),
	)
	o.wantText("deleted flash", `[data-testid="flash"]`, "Deleted application "+imported)

	// The GET forms: each lands on its page with the query.
	o.run("open the audit log", chromedp.Navigate(base+"/events"), chromedp.WaitVisible(css(`[data-testid="team-event-filter"]`)))
	kind := o.eval("pick the last kind", `(() => { const s = document.querySelector('#events-kind'); s.value = s.options[s.options.length - 1].value; return s.value; })()`)
	o.run("filter the audit log", chromedp.Click(css(`[data-testid="team-event-filter"] button[type="submit"]`)))
	o.until("the audit log is filtered", fmt.Sprintf(`location.pathname === "/events" && new URLSearchParams(location.search).get("kind") === %q`, kind))
	o.run("search from the header",
		chromedp.SendKeys(css(`#header-search-q`), app),
		chromedp.Click(css(`[data-testid="header-search"] button`)),
		chromedp.WaitVisible(css(`[data-testid="tab-events"]`)),
	)
	o.wantText("the exact name opens the application", `[data-testid="application-name"]`, app)
	o.run("filter its events",
		chromedp.Click(css(`[data-testid="tab-events"]`)),
		chromedp.WaitVisible(css(`[data-testid="event-filter"]`)),
		chromedp.Click(css(`[data-testid="event-filter"] button[type="submit"]`)),
	)
	o.until("its events are filtered", `location.pathname.endsWith("/events") && location.search.length > 1`)
	o.run("search the list",
		chromedp.Navigate(base+"/applications"),
		chromedp.SendKeys(css(`#application-search`), app),
	)
	o.until("the list is searched", `location.search.includes("q=") && document.querySelectorAll('[data-testid="application-row"]').length === 1`)
}

// viewerForms are the forms a viewer is offered: its own session, team and
// password, API tokens (of its own role's scopes), an import's Translate
// and the editor's checks. Any other form on a page a viewer opens is a
// control it may not use.
var viewerForms = []string{
	"/logout", "/teams", "/teams/*/switch", "/account/password",
	"/tokens", "/tokens/*/revoke", "/applications/import",
	"/manifest/validate", "/manifest/plan",
}

// viewerWalk opens every page of the team and of the application at
// appPath as the viewer v and fails on any form it offers that is not in
// viewerForms; then it submits the ones it may use: Translate on the
// import page and the header's search.
func viewerWalk(v *ui, base, appPath, deployment, envID string) {
	v.t.Helper()
	pages := []string{
		"/applications", appPath, appPath + "/manifest", appPath + "/deployments", deployment,
		appPath + "/environments", appPath + "/environments/production/daytwo", appPath + "/previews",
		appPath + "/secrets", appPath + "/links", appPath + "/events", appPath + "/settings",
		"/members", "/tokens", "/registry-credentials", "/notifications", "/events", "/account", "/applications/import",
	}
	for _, p := range pages {
		v.run("viewer opens "+p, chromedp.Navigate(base+p), chromedp.WaitVisible(chromedp.CSS(`main`)))
		got := v.eval("read the forms of "+p, `JSON.stringify([...document.querySelectorAll('form[method="post" i]')].map(f => new URL(f.action).pathname).concat([...document.querySelectorAll('[hx-post]')].map(e => e.getAttribute('hx-post'))))`)
		var actions []string
		if err := json.Unmarshal([]byte(got), &actions); err != nil {
			v.fail("read the forms of "+p, err)
		}
	next:
		for _, a := range actions {
			for _, ok := range viewerForms {
				if viewstest.Match(ok, a) {
					continue next
				}
			}
			v.t.Errorf("the viewer is offered a form posting to %s on %s", a, p)
		}
	}
	v.run("viewer translates a Compose file",
		chromedp.SetValue(chromedp.CSS(`#f-from`), "compose"),
		chromedp.SetValue(chromedp.CSS(`#f-source`), "services:\n  web:\n    image: nginx:1\n"),
		chromedp.Click(chromedp.CSS(`[data-testid="import-preview"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="import-result"]`)),
	)
	if v.count(`[data-testid="import-create"]`) != 0 {
		v.t.Error("the viewer is offered Create application on the import page")
	}
}
