package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// setupGitHub is setup with the GitHub pages on, over the fake GitHub:
// with static, the App is configured (as SLIPWAY_GITHUB_* would);
// without, only GitHub's location is known and the App is registered from
// the dashboard.
func setupGitHub(t *testing.T, fake *githubtest.Server, static bool) *testBundle {
	t.Helper()
	st := storetest.New(t)
	clk := &clock{t: time.Now()}
	key, err := keyring.NewKey(bytes.Repeat([]byte{7}, keyring.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	kr := keyring.New(key)
	src := &github.Source{Store: st, Sealer: kr, APIURL: fake.URL + "/", Options: github.Options{Retry: github.RetryPolicy{BaseDelay: time.Millisecond}}}
	if static {
		cfg := fake.Config()
		src.Static = &cfg
	}
	rc, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(app.Config{
		Store: st, Argon2: auth.TestArgon2, Jobs: rc, Now: clk.now, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)),
		GitHub: &app.GitHub{Source: src, StateKey: kr.DeriveKey("test/github-states"), PublicURL: "https://slipway.test"},
	})
	return &testBundle{app: a, store: st, clock: clk}
}

// stateOf returns the state query parameter of a redirect or form URL.
func stateOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	s := u.Query().Get("state")
	if s == "" {
		t.Fatalf("no state in %q", raw)
	}
	return s
}

// connectState clicks Connect GitHub and returns the state it carries to
// the App's installation page.
func connectState(t *testing.T, br *browser, fake *githubtest.Server) string {
	t.Helper()
	br.get("/github")
	r := br.post("/github/connect", nil)
	loc := r.header.Get("Location")
	if r.status != http.StatusSeeOther || !strings.HasPrefix(loc, fake.URL+"/apps/"+fake.Slug+"/installations/new?state=") {
		t.Fatalf("Connect GitHub: %d to %q, want a redirect to the App's installation page", r.status, loc)
	}
	return stateOf(t, loc)
}

func boundInstallations(t *testing.T, st *store.Store, team store.Team) []int64 {
	t.Helper()
	list, err := st.ListGitHubInstallations(context.Background(), team.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, in := range list {
		ids = append(ids, in.InstallationID)
	}
	return ids
}

func TestGitHubSetupCallback_BindsOnlyWithAFreshStateOfTheSameUser(t *testing.T) {
	fake := githubtest.New(t)
	for _, id := range []int64{55, 56, 57, 58} {
		fake.AddInstallation(id, "acme", githubtest.Repo{ID: id * 10, FullName: "acme/notes"})
	}
	b := setupGitHub(t, fake, true)
	owner := b.signup(t, "owner@example.com", "Acme")
	other := b.addMember(t, owner.team, "dev@example.com", store.RoleDeveloper)
	br := b.browser(t)
	br.login("owner@example.com")

	setup := func(br *browser, id, state string) response {
		return br.get("/github/setup?setup_action=install&installation_id=" + id + "&state=" + url.QueryEscape(state))
	}
	state := connectState(t, br, fake)

	// Forged, tampered or missing states bind nothing.
	for name, bad := range map[string]string{
		"forged":   "eyJ0IjoidGVhbSJ9.AAAA",
		"tampered": state[:len(state)-2] + "xx",
		"missing":  "",
	} {
		if r := setup(br, "55", bad); r.status != http.StatusBadRequest {
			t.Errorf("%s state: status %d, want 400", name, r.status)
		}
	}
	// Another member of the team cannot use the owner's state.
	if r := setup(b.sessionBrowser(t, other), "55", state); r.status != http.StatusForbidden {
		t.Errorf("another user's state: status %d, want 403", r.status)
	}
	// Signed out: to the login page, nothing bound.
	if r := setup(b.browser(t), "55", state); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/login") {
		t.Errorf("signed-out callback: %d to %q, want the login page", r.status, r.header.Get("Location"))
	}
	if ids := boundInstallations(t, b.store, owner.team); len(ids) != 0 {
		t.Fatalf("refused callbacks bound %v", ids)
	}

	// The owner's own fresh state binds the installation, once.
	if r := setup(br, "55", state); r.status != http.StatusSeeOther || r.header.Get("Location") != "/github?notice=installation_bound" {
		t.Fatalf("setup callback: %d to %q, body %.300s", r.status, r.header.Get("Location"), r.body)
	}
	if r := setup(br, "56", state); r.status != http.StatusBadRequest || !strings.Contains(r.body, "install_state_used") {
		t.Errorf("replayed state: status %d, want 400 install_state_used", r.status)
	}

	// An expired state binds nothing either.
	late := connectState(t, br, fake)
	b.clock.advance(github.DefaultStateTTL + time.Second)
	if r := setup(br, "57", late); r.status != http.StatusBadRequest || !strings.Contains(r.body, "install_state_expired") {
		t.Errorf("expired state: status %d, want 400 install_state_expired", r.status)
	}
	// An installation id that is not the App's binds nothing, and leaves
	// the state usable.
	fresh := connectState(t, br, fake)
	if r := setup(br, "9999", fresh); r.status != http.StatusBadRequest {
		t.Errorf("unknown installation: status %d, want 400", r.status)
	}
	if r := setup(br, "58", fresh); r.status != http.StatusSeeOther {
		t.Errorf("state after a refused installation: status %d, want it still usable", r.status)
	}
	if ids := boundInstallations(t, b.store, owner.team); len(ids) != 2 || ids[0] != 55 || ids[1] != 58 {
		t.Fatalf("bound installations %v, want [55 58]", ids)
	}

	// The page lists the installation's repositories (through its token).
	page := br.get("/github")
	if n := page.doc.Find(`[data-testid="github-repository"]`).Length(); n != 2 {
		t.Errorf("GitHub page lists %d repositories, want 2:\n%.2000s", n, page.body)
	}
}

func TestGitHubRepositoryConnect_MakesTheApplicationRepositoryBacked(t *testing.T) {
	fake := githubtest.New(t)
	fake.AddInstallation(55, "acme", githubtest.Repo{ID: 550, FullName: "acme/notes", DefaultBranch: "trunk"})
	fake.AddInstallation(66, "evil", githubtest.Repo{ID: 660, FullName: "evil/other"})
	b := setupGitHub(t, fake, true)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.browser(t)
	br.login("owner@example.com")
	if r := br.get("/github/setup?installation_id=55&state=" + url.QueryEscape(connectState(t, br, fake))); r.status != http.StatusSeeOther {
		t.Fatalf("bind: %d", r.status)
	}
	ctx := context.Background()
	actor := service.Actor{TeamID: owner.team.ID, UserID: owner.user.ID, Scopes: auth.ScopesOf(auth.RoleOwner)}
	saved, err := service.ApplyManifest(ctx, b.store, actor, nil, []byte("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \"notes\"\n"), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appID := saved.Application.ID

	// Another team's installation (never bound here) is not found.
	if r := br.post("/github/repositories/connect", url.Values{"installation_id": {"66"}, "repository_id": {"660"}, "application": {appID}}); r.status != http.StatusNotFound {
		t.Errorf("connect through an unbound installation: %d, want 404", r.status)
	}
	// A repository the installation cannot read is refused.
	if r := br.post("/github/repositories/connect", url.Values{"installation_id": {"55"}, "repository_id": {"660"}, "application": {appID}}); r.status != http.StatusUnprocessableEntity {
		t.Errorf("connect a repository outside the installation: %d, want 422", r.status)
	}
	r := br.post("/github/repositories/connect", url.Values{"installation_id": {"55"}, "repository_id": {"550"}, "application": {appID}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("connect: %d %.500s", r.status, r.body)
	}
	link, err := b.store.GetGitHubRepositoryLink(ctx, owner.team.ID, appID)
	if err != nil || link.RepositoryID != 550 || link.FullName != "acme/notes" || link.InstallationID != 55 {
		t.Fatalf("link = %+v, %v", link, err)
	}
	rev, err := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, appID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode(rev.Manifest, "json")
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Spec.Manifest; c == nil || c.Repository == nil || c.Repository.URL != fake.URL+"/acme/notes.git" ||
		c.Repository.Branch != "trunk" || c.Path != "slipway.toml" || c.Sync == nil || c.Sync.Mode != "webhook" {
		t.Errorf("saved spec.manifest: %s", rev.Manifest)
	}
}

func TestGitHubManifestFlow_StoresTheAppSealed(t *testing.T) {
	fake := githubtest.New(t)
	b := setupGitHub(t, fake, false)
	owner := b.signup(t, "owner@example.com", "Acme")
	dev := b.addMember(t, owner.team, "dev@example.com", store.RoleDeveloper)
	br := b.browser(t)
	br.login("owner@example.com")
	ctx := context.Background()

	// Only an owner registers the App.
	devBrowser := b.sessionBrowser(t, dev)
	devBrowser.get("/github")
	if r := devBrowser.post("/github/app/manifest", nil); r.status != http.StatusForbidden {
		t.Errorf("a developer starting the manifest flow: %d, want 403", r.status)
	}

	page := br.get("/github")
	if page.doc.Find(`[data-testid="github-manifest-form"]`).Length() != 1 {
		t.Fatalf("no manifest form for the owner:\n%.2000s", page.body)
	}
	r := br.post("/github/app/manifest", url.Values{"organization": {"acme"}})
	form := r.doc.Find(`form[data-testid="github-manifest-post"]`)
	action, _ := form.Attr("action")
	manifestJSON, _ := form.Find(`input[name="manifest"]`).Attr("value")
	if r.status != http.StatusOK || !strings.HasPrefix(action, fake.URL+"/organizations/acme/settings/apps/new?state=") {
		t.Fatalf("manifest page: %d, form action %q", r.status, action)
	}
	for _, want := range []string{`"redirect_url":"https://slipway.test/github/app/callback"`, `"url":"https://slipway.test/webhooks/github"`, `"setup_url":"https://slipway.test/github/setup"`} {
		if !strings.Contains(manifestJSON, want) {
			t.Errorf("manifest lacks %s: %s", want, manifestJSON)
		}
	}
	state := stateOf(t, action)
	fake.AddManifestCode("code-1")

	// A bad state or an unknown code stores nothing.
	if r := br.get("/github/app/callback?code=code-1&state=" + url.QueryEscape(state[:len(state)-3]+"abc")); r.status != http.StatusBadRequest {
		t.Errorf("tampered state: %d, want 400", r.status)
	}
	if r := br.get("/github/app/callback?code=nope&state=" + url.QueryEscape(state)); r.status != http.StatusBadGateway {
		t.Errorf("unknown code: %d, want 502", r.status)
	}
	if _, err := b.store.GetGitHubApp(ctx); err == nil {
		t.Fatal("a refused callback stored an App")
	}

	// The real one: the state is still unused (nothing committed above).
	r = br.get("/github/app/callback?code=code-1&state=" + url.QueryEscape(state))
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/github?notice=app_registered" {
		t.Fatalf("callback: %d to %q: %.500s", r.status, r.header.Get("Location"), r.body)
	}
	// The page says what the notice means; a notice it does not know
	// (any text in the query) is not shown.
	if n := testid(br.get("/github?notice=app_registered"), "notice").Text(); n != "The GitHub App is set up." {
		t.Errorf("notice %q, want its message", n)
	}
	if n := testid(br.get("/github?notice=Call+us"), "notice").Length(); n != 0 {
		t.Error("the page shows a notice it does not know")
	}
	row, err := b.store.GetGitHubApp(ctx)
	if err != nil || row.AppID != fake.AppID || row.Slug != fake.Slug {
		t.Fatalf("stored App %+v, %v", row, err)
	}
	if bytes.Contains(row.PrivateKeySealed, []byte("PRIVATE KEY")) || bytes.Contains(row.WebhookSecretSealed, []byte(fake.WebhookSecret)) {
		t.Error("the App's secrets are stored in clear")
	}
	if n := fake.CountCalls(http.MethodPost, "/app-manifests/code-1/conversions"); n != 1 {
		t.Errorf("conversions of code-1: %d, want 1", n)
	}

	// The registered App now drives Connect GitHub, and a second
	// registration is refused.
	br.get("/github")
	connectState(t, br, fake)
	if r := br.get("/github/app/callback?code=code-1&state=" + url.QueryEscape(state)); r.status != http.StatusConflict {
		t.Errorf("second registration: %d, want 409", r.status)
	}
}

func TestGitHubApprove_DashboardAndAPI(t *testing.T) {
	fake := githubtest.New(t)
	fake.AddInstallation(55, "acme", githubtest.Repo{ID: 550, FullName: "acme/notes"})
	b := setupGitHub(t, fake, true)
	owner := b.signup(t, "owner@example.com", "Acme")
	ctx := context.Background()
	actor := service.Actor{TeamID: owner.team.ID, UserID: owner.user.ID, Scopes: auth.ScopesOf(auth.RoleOwner)}
	saved, err := service.ApplyManifest(ctx, b.store, actor, nil, []byte("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \"notes\"\n"), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appID := saved.Application.ID
	if _, err := b.store.BindGitHubInstallation(ctx, owner.team.ID, 55, owner.user.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.LinkGitHubRepository(ctx, owner.team.ID, appID, 55, 550, "acme/notes"); err != nil {
		t.Fatal(err)
	}
	pr, err := b.store.UpsertGitHubPullRequest(ctx, owner.team.ID, store.GitHubPullRequestParams{
		ApplicationID: appID, InstallationID: 55, RepositoryID: 550, FullName: "acme/notes", Number: 12,
		HeadBranch: "patch-1", HeadSHA: strings.Repeat("c", 40), AuthorLogin: "mallory", FromFork: true,
		Approval: store.ApprovalPending, Status: github.CommentApprovalRequired,
	})
	if err != nil {
		t.Fatal(err)
	}
	previewJobs := func() int {
		var n int
		if err := b.store.Tx().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'github_preview' AND args->>'pull_request_id' = $1`, pr.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	br := b.browser(t)
	br.login("owner@example.com")
	page := br.get("/github")
	if page.doc.Find(`[data-testid="github-pull-request"][data-number="12"] [data-testid="github-approve"]`).Length() != 1 {
		t.Fatalf("no approve button for #12:\n%.3000s", page.body)
	}
	// An unknown pull request is not found; nothing is queued.
	if r := br.post("/applications/"+appID+"/pull-requests/13/approve", nil); r.status != http.StatusNotFound {
		t.Errorf("approve an unknown pull request: %d, want 404", r.status)
	}
	if r := br.post("/applications/"+appID+"/pull-requests/12/approve", nil); r.status != http.StatusSeeOther {
		t.Fatalf("approve: %d %.500s", r.status, r.body)
	}
	got, err := b.store.GetGitHubPullRequest(ctx, owner.team.ID, pr.ID)
	if err != nil || got.Approval != store.ApprovalApproved || got.ApprovedBy != owner.user.ID {
		t.Fatalf("after approving: %+v, %v", got, err)
	}
	if n := previewJobs(); n != 1 {
		t.Fatalf("github_preview jobs queued: %d, want 1", n)
	}

	// The API: approving again is refused with its code, and queues nothing.
	_, secret := b.token(t, owner.team, owner.user, auth.RoleOwner, auth.AppsDeploy)
	r := b.api(t, secret, http.MethodPost, "/api/v1/applications/notes/pull-requests/12/approve", nil)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "approval_not_pending") {
		t.Errorf("API approve of an approved pull request: %d %s", r.status, r.raw)
	}
	// A token without apps:deploy cannot approve.
	_, readOnly := b.token(t, owner.team, owner.user, auth.RoleOwner, auth.AppsRead)
	if r := b.api(t, readOnly, http.MethodPost, "/api/v1/applications/notes/pull-requests/12/approve", nil); r.status != http.StatusForbidden {
		t.Errorf("API approve with apps:read: %d", r.status)
	}
	// A second pending pull request approves through the API.
	pr2, err := b.store.UpsertGitHubPullRequest(ctx, owner.team.ID, store.GitHubPullRequestParams{
		ApplicationID: appID, InstallationID: 55, RepositoryID: 550, FullName: "acme/notes", Number: 14,
		HeadBranch: "patch-2", HeadSHA: strings.Repeat("d", 40), AuthorLogin: "rita",
		Approval: store.ApprovalPending, Status: github.CommentApprovalRequired,
	})
	if err != nil {
		t.Fatal(err)
	}
	r = b.api(t, secret, http.MethodPost, "/api/v1/applications/notes/pull-requests/14/approve", nil)
	if r.status != http.StatusAccepted || r.body["approval"] != "approved" || r.body["head_sha"] != pr2.HeadSHA {
		t.Fatalf("API approve: %d %s", r.status, r.raw)
	}
	if n := previewJobs(); n != 1 {
		t.Errorf("github_preview jobs of #12 after approving #14: %d, want still 1", n)
	}
}
