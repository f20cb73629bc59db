package browser

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// The application of TestDashboard_ActionForms: web mounts a generated
// secret, and %s adds to web's table (an environment, a health check).
const actionsManifest = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "%s"

[[spec.secrets]]
name = "session-key"
generate = { type = "random", bytes = 32 }

[[spec.services]]
name = "web"
replicas = 1
%s
[spec.services.source]
type = "image"
image = "%s"

[[spec.services.secrets]]
name = "session-key"
target = "/run/secrets/session"
`

// acceptConfirms makes the page's confirm() (htmx's hx-confirm) say yes,
// as a person would; a new page needs it again.
var acceptConfirms = chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
	_, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.confirm = () => true; "ok"`))
	return err
})

// TestDashboard_ActionForms clicks the forms TestDashboard_FormsThroughTheUI
// leaves out, on one slipway dev whose GitHub is a fake: a generated
// secret's Regenerate; a failed deployment's Retry; Cancel on a
// deployment whose health check never passes, while it rolls out; Back
// up now, Restore here and Run now on the Schedules and backups page; a
// preview created from a branch of a file:// repository, deployed again
// and deleted from the Previews tab until it leaves the list; an
// environment's branch; and the GitHub page's App
// credentials (refused), App manifest, Connect GitHub and repository
// connection. Each answers with a visible message and the state it names.
func TestDashboard_ActionForms(t *testing.T) {
	if testing.Short() {
		t.Skip("starts slipway dev, Chromium and Swarm deployments")
	}
	image := swarmtest.Image(t, "web")
	id := swarmtest.ID()
	// Registered before dev starts, so it runs after dev stopped.
	var appIDs []string
	t.Cleanup(func() {
		for _, a := range appIDs {
			removeApplication(t, a)
		}
	})
	fake := githubtest.New(t)
	const installation, repoID = 4711, 99
	fake.AddInstallation(installation, "acme", githubtest.Repo{ID: repoID, FullName: "acme/shop", DefaultBranch: "main"})
	// A long convergence timeout: the unhealthy rollout is cancelled, not
	// timed out.
	p, base, _ := devSession(t, "actions", id,
		"SLIPWAY_GITHUB_API_URL="+fake.URL, "SLIPWAY_GITHUB_WEB_URL="+fake.URL,
		"SLIPWAY_RECONCILIATION_CONVERGENCE_TIMEOUT_SECONDS=600")
	o := &ui{t: t, ctx: p.ctx, shots: p.shots, who: "actions-owner"}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	name := "acts-" + id

	p.signup("Actions team")
	p.deploy("deploy web with a generated secret", base, fmt.Sprintf(actionsManifest, name, "", image))
	appPath := o.eval("read the application", `new URL(document.querySelector('[data-testid="tab-overview"]').href).pathname`)
	appIDs = append(appIDs, strings.Split(appPath, "/")[2])
	o.run("first deployment succeeds", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)))

	// Regenerate: the next deployment of production gets a new value.
	o.run("regenerate session-key",
		chromedp.Navigate(base+appPath+"/secrets"),
		chromedp.WaitVisible(css(`[data-testid="generated-list"][data-environment="production"] [data-secret="session-key"] [data-testid="generated-regenerate"]`)),
		acceptConfirms,
		chromedp.Click(css(`[data-testid="generated-list"][data-environment="production"] [data-secret="session-key"] [data-testid="generated-regenerate"]`)),
		chromedp.WaitVisible(css(`[data-testid="generated-list"][data-environment="production"] [data-secret="session-key"] [data-testid="generated-pending"]`)),
	)
	o.wantText("regenerate notice", `[data-testid="secrets-notice"]`, "The next deployment of production generates a new session-key.")

	// Retry: a deployment of an image that does not exist fails, and so
	// does its retry, a new deployment of the same revision.
	missing := fmt.Sprintf(actionsManifest, name, "", "slipway-test/missing:nope")
	p.saveManifest("deploy a missing image", base+appPath+"/manifest", missing, "manifest-save-deploy", `[data-testid="deployment-timeline"]`)
	o.run("it fails", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="failed"]`)))
	failed := o.eval("read the failed deployment", `location.pathname`)
	o.run("retry",
		acceptConfirms,
		chromedp.Click(css(`[data-testid="deployment-retry"]`)),
	)
	o.wantText("retry flash", `[data-testid="flash"]`, "Deploying production again at revision 2")
	if retried := o.eval("read the retry", `location.pathname`); retried == failed {
		t.Fatalf("Retry stayed on the failed deployment %s", failed)
	}
	o.run("the retry fails too", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="failed"]`)))

	// Cancel: web's health check never passes, so its rollout runs until
	// it is cancelled.
	unhealthy := fmt.Sprintf(actionsManifest, name, "\n[spec.services.environment]\nHEALTHY = \"false\"\n\n[spec.services.healthcheck]\ntype = \"http\"\nport = 8080\n", image)
	p.saveManifest("deploy an unhealthy web", base+appPath+"/manifest", unhealthy, "manifest-save-deploy", `[data-testid="deployment-timeline"]`)
	o.run("cancel while web rolls out",
		chromedp.WaitVisible(css(`[data-step="rollout:web"][data-state="running"]`)),
		acceptConfirms,
		chromedp.Click(css(`[data-testid="deployment-cancel"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="cancelled"]`)),
	)
	o.wantText("cancel flash", `[data-testid="flash"]`, "Deployment of production cancelled; production keeps running what it ran before.")
	if n := o.count(`[data-testid="deployment-cancel"]`); n != 0 {
		t.Errorf("a cancelled deployment still offers Cancel")
	}

	// Schedules and backups: web mounts a volume, and a job of tool (the
	// run-to-completion image, no replica of its own) runs on a schedule;
	// the volume is backed up by hand and restored, and the job run now.
	daytwo := fmt.Sprintf(actionsManifest, name, "\n[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/data\"\n", image) +
		"\n[[spec.volumes]]\nname = \"data\"\n\n[[spec.services]]\nname = \"tool\"\nreplicas = 0\n\n[spec.services.source]\ntype = \"image\"\nimage = \"" + swarmtest.Image(t, "job") + "\"\n" +
		"\n[[spec.jobs]]\nname = \"report\"\nservice = \"tool\"\ncommand = [\"/app\", \"--print\", \"report done\"]\nschedule = \"@monthly\"\n"
	p.saveManifest("deploy web with a volume and a job", base+appPath+"/manifest", daytwo, "manifest-save-deploy", `[data-testid="deployment-timeline"]`)
	o.run("it succeeds", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)))
	o.run("open schedules and backups",
		chromedp.Navigate(base+appPath+"/environments"),
		chromedp.Click(css(`[data-testid="environment-daytwo"][aria-label="Schedules and backups of production"]`)),
		chromedp.WaitVisible(css(`[data-testid="backup-form"]`)),
	)
	dayTwo := o.eval("read the page", `location.pathname`)
	o.run("back up the volume",
		chromedp.SetValue(css(`#backup-subject`), "volume:data"),
		chromedp.Click(css(`[data-testid="backup-form"] button`)),
	)
	o.wantText("backup notice", `[data-testid="flash"]`, "queued")
	o.reloadUntil("the backup succeeds", base+dayTwo, `!!document.querySelector('[data-testid^="restore-"]')`)
	o.run("restore it", acceptConfirms, chromedp.Click(css(`[data-testid^="restore-"]`)))
	o.wantText("restore notice", `[data-testid="flash"]`, "queued")
	o.reloadUntil("the restore succeeds", base+dayTwo, `[...document.querySelectorAll('[data-testid="restores"] li')].some(l => l.textContent.includes("succeeded"))`)
	o.run("run the job now", chromedp.Click(css(`[data-testid="run-now-report"]`)))
	o.wantText("run notice", `[data-testid="flash"]`, "of report queued.")
	o.reloadUntil("the run succeeds", base+dayTwo, `[...document.querySelectorAll('[data-testid="job-runs"] tbody tr')].some(r => r.textContent.includes("report done"))`)

	// A preview of a branch of the manifest's repository, created, deployed
	// again and deleted from the Previews tab.
	repo := pipelinetest.NewGitRepo(t)
	pvName := "pv-" + id
	repo.Write("slipway.toml", []byte(fmt.Sprintf("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n\n[metadata]\nname = %q\n\n[[spec.services]]\nname = \"web\"\n\n[spec.services.source]\ntype = \"image\"\nimage = %q\n", pvName, image)), 0o644)
	repo.Commit("manifest")
	repo.Branch("feat/ui")
	repo.Commit("the branch")
	bootstrap := fmt.Sprintf("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n\n[metadata]\nname = %q\n\n[spec.manifest]\npath = \"slipway.toml\"\nrepository = { url = %q, branch = \"main\" }\n", pvName, repo.URL())
	p.saveManifest("save an application whose manifest is in a repository", base+"/applications", bootstrap, "manifest-save", `[data-testid="tab-previews"]`)
	pvPath := o.eval("read the application", `new URL(document.querySelector('[data-testid="tab-overview"]').href).pathname`)
	appIDs = append(appIDs, strings.Split(pvPath, "/")[2])
	o.run("create a preview of feat/ui",
		chromedp.Navigate(base+pvPath+"/previews"),
		chromedp.SendKeys(css(`#preview-branch`), "feat/ui"),
		chromedp.Click(css(`[data-testid="preview-create"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)),
	)
	o.run("the preview is listed",
		chromedp.Navigate(base+pvPath+"/previews"),
		chromedp.WaitVisible(css(`[data-testid="preview-row"] [data-testid="preview-deploy"]`)),
	)
	slug := o.eval("read the slug", `document.querySelector('[data-testid="preview-row"]').dataset.slug`)

	first := o.eval("read its deployment", `new URL(document.querySelector('[data-testid="preview-deployment"]').href).pathname`)
	o.run("deploy the preview again",
		chromedp.Click(css(`[data-slug="`+slug+`"] [data-testid="preview-deploy"]`)),
		chromedp.WaitVisible(css(`[data-testid="deployment-timeline"]`)),
	)
	if again := o.eval("read the new deployment", `location.pathname`); again == first {
		t.Fatalf("Deploy on the preview row did not start a deployment (still %s)", first)
	}
	o.run("the preview's deployment succeeds", chromedp.WaitVisible(css(`[data-testid="deployment-timeline"][data-state="succeeded"]`)))
	o.run("delete the preview",
		chromedp.Navigate(base+pvPath+"/previews"),
		chromedp.WaitVisible(css(`[data-slug="`+slug+`"] [data-testid="preview-delete"]`)),
		acceptConfirms,
		chromedp.Click(css(`[data-slug="`+slug+`"] [data-testid="preview-delete"]`)),
	)
	o.wantText("delete notice", `[data-testid="previews-notice"]`, "Preview "+slug+" is being deleted.")
	// Deleting goes on in a job: the row says so and offers no more
	// buttons, then leaves the list (the preview has no routes: its
	// gateway disconnect used to fail, and the row stayed).
	o.wantText("the preview is being deleted", `[data-slug="`+slug+`"] [data-testid="state-badge"]`, "deleting")
	if n := o.count(`[data-slug="` + slug + `"] form`); n != 0 {
		t.Errorf("a preview being deleted still offers %d forms", n)
	}
	o.run("production follows another branch",
		chromedp.Navigate(base+pvPath+"/environments"),
		chromedp.Click(css(`[data-testid="environment-manage"][data-environment="production"] summary`)),
		chromedp.SetValue(css(`#branch-production`), "feat/ui"),
		chromedp.Click(css(`[data-environment="production"] [data-testid="environment-branch-save"]`)),
	)
	o.wantText("branch notice", `main`, "Branch and sync of production saved")
	o.reloadUntil("the preview leaves the list", base+pvPath+"/previews", `!document.querySelector('[data-slug="`+slug+`"]')`)

	// GitHub: an App's credentials are checked before they are stored;
	// the App made from Slipway's manifest, GitHub answering through the
	// fake; then Connect GitHub and a repository connected to an
	// application.
	o.run("credentials of an existing App",
		chromedp.Navigate(base+"/github"),
		chromedp.SendKeys(css(`[data-testid="github-credentials-form"] #f-app_id`), "12"),
		chromedp.SendKeys(css(`[data-testid="github-credentials-form"] #f-app_slug`), "mine"),
		chromedp.SendKeys(css(`#f-private_key`), "not a key"),
		chromedp.SendKeys(css(`[data-testid="github-credentials-form"] #f-webhook_secret`), "whsec"),
		chromedp.Click(css(`[data-testid="github-credentials-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="error-private_key"]`)),
	)
	o.wantText("the key is refused", `[data-testid="error-private_key"]`, "private_key_invalid")
	if o.count(`[data-testid="github-manifest-form"]`) != 1 {
		t.Fatal("refused credentials set up an App")
	}
	o.run("create the App from the manifest",
		chromedp.Click(css(`[data-testid="github-manifest-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="github-manifest-continue"]`)),
		chromedp.Click(css(`[data-testid="github-manifest-continue"]`)),
	)
	// GitHub would ask to confirm, then send the browser back with a code.
	state := o.awaitRedirect("the manifest post reaches GitHub", fake.URL+"/settings/apps/new")
	code := "code-" + id
	fake.AddManifestCode(code)
	o.run("GitHub sends the browser back",
		chromedp.Navigate(base+"/github/app/callback?code="+code+"&state="+url.QueryEscape(state)),
		chromedp.WaitVisible(css(`[data-testid="github-connect"]`)),
	)
	o.wantText("app notice", `main`, "The GitHub App is set up.")
	o.run("connect GitHub", chromedp.Click(css(`[data-testid="github-connect"]`)))
	state = o.awaitRedirect("Connect GitHub opens the App's installation", fake.URL+"/apps/"+fake.Slug+"/installations/new")
	o.run("GitHub sends the browser to the setup URL",
		chromedp.Navigate(fmt.Sprintf("%s/github/setup?installation_id=%d&state=%s", base, installation, url.QueryEscape(state))),
		chromedp.WaitVisible(css(fmt.Sprintf(`[data-testid="github-repository"][data-id="%d"]`, repoID))),
	)
	o.wantText("installation notice", `main`, "GitHub is connected to this team.")
	ghName := "gh-" + id
	o.run("an application for the repository",
		chromedp.Navigate(base+"/applications"),
		chromedp.SendKeys(css(`#f-name`), ghName),
		chromedp.Click(css(`[data-testid="application-create"]`)),
		chromedp.WaitVisible(css(`[data-testid="starter-notice"]`)),
		chromedp.Click(css(`[data-testid="manifest-save"]`)),
	)
	o.wantText("the starter is saved", `[data-testid="flash"]`, "Saved revision 1")
	ghApp := strings.Split(o.eval("read the application", `new URL(document.querySelector('[data-testid="tab-overview"]').href).pathname`), "/")[2]
	appIDs = append(appIDs, ghApp)
	o.run("open the GitHub page", chromedp.Navigate(base+"/github"), chromedp.WaitVisible(css(`[data-testid="github-repository-connect"]`)))
	o.run("connect acme/shop to "+ghName,
		chromedp.SetValue(css(fmt.Sprintf(`#app-%d`, repoID)), ghApp),
		chromedp.Click(css(fmt.Sprintf(`[data-testid="github-repository"][data-id="%d"] [data-testid="github-repository-connect"]`, repoID))),
		chromedp.WaitVisible(css(`[data-testid="github-application"][data-id="`+ghApp+`"]`)),
	)
	o.wantText("repository notice", `main`, "The application is connected to the repository")
	o.wantText("the application names its repository", `[data-testid="github-application"][data-id="`+ghApp+`"]`, "acme/shop")

	// A viewer sees these pages without their forms.
	v := join(o, o.invite(base, "viewer@example.com", "viewer"), "actions-viewer", "viewer@example.com")
	for _, c := range []struct{ path, ready, control string }{
		{failed, `[data-testid="deployment-timeline"]`, `[data-testid="deployment-actions"]`},
		{appPath + "/secrets", `[data-testid="generated-list"]`, `[data-testid="generated-regenerate"]`},
		{pvPath + "/previews", `[data-testid="tab-previews"]`, `[data-testid="preview-create-form"]`},
		{"/github", `[data-testid="github-installation"]`, `[data-testid="github-installations"] form`},
	} {
		v.run("viewer opens "+c.path, chromedp.Navigate(base+c.path), chromedp.WaitVisible(css(c.ready)))
		if v.count(c.control) != 0 {
			t.Errorf("the viewer is offered %s on %s", c.control, c.path)
		}
	}
}

// awaitRedirect waits until the tab is at prefix (a page of the fake
// GitHub) and returns the state the dashboard signed into its query.
func (u *ui) awaitRedirect(step, prefix string) string {
	u.t.Helper()
	js := fmt.Sprintf(`location.href.startsWith(%q) ? new URL(location.href).searchParams.get("state") || "" : ""`, prefix)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(u.ctx, 10*time.Second)
		state, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		cancel()
		if err == nil && state != "" {
			return state
		}
	}
	u.fail(step, fmt.Errorf("the browser is at %s, not %s with a state", u.eval("read the location", `location.href`), prefix))
	return ""
}

// reloadUntil opens url until js is true on it: what a job does shows on
// the next load of the page.
func (u *ui) reloadUntil(step, url, js string) {
	u.t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		u.run(step, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`main`)))
		if u.eval(step, `String(`+js+`)`) == "true" {
			return
		}
	}
	u.fail(step, fmt.Errorf("%s is not true at %s", js, url))
}
