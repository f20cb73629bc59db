package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/app/auth"
	appservice "github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/app/webhook"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	slwswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

const (
	ghInstallation = int64(4711)
	ghRepoID       = int64(99)
	ghRepo         = "acme/notes"
	ghForkRepoID   = int64(1234)
)

// ghRepoFixture is the application's repository: a bare repository served
// by file:// (dev allows it), written through go-git.
type ghRepoFixture struct {
	t    *testing.T
	dir  string
	repo *git.Repository
	when time.Time
}

func newGHRepo(t *testing.T, dir string) *ghRepoFixture {
	t.Helper()
	_, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{Bare: true, InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	ghMust(t, err)
	repo, err := git.Open(filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), memfs.New())
	ghMust(t, err)
	return &ghRepoFixture{t: t, dir: dir, repo: repo, when: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
}

func (g *ghRepoFixture) url() string { return "file://" + g.dir }

// commit writes slipway.toml on branch (created from HEAD when missing)
// and commits it, returning the commit hash.
func (g *ghRepoFixture) commit(branch, manifest, msg string) string {
	g.t.Helper()
	w, err := g.repo.Worktree()
	ghMust(g.t, err)
	ref := plumbing.NewBranchReferenceName(branch)
	if head, err := g.repo.Head(); err == nil && head.Name() != ref {
		_, missing := g.repo.Reference(ref, false)
		ghMust(g.t, w.Checkout(&git.CheckoutOptions{Branch: ref, Create: missing != nil, Keep: true}))
	}
	f, err := w.Filesystem.Create("slipway.toml")
	ghMust(g.t, err)
	_, err = f.Write([]byte(manifest))
	ghMust(g.t, err)
	ghMust(g.t, f.Close())
	ghMust(g.t, w.AddWithOptions(&git.AddOptions{All: true}))
	g.when = g.when.Add(time.Minute)
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: g.when}
	h, err := w.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	ghMust(g.t, err)
	return h.String()
}

func ghMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ghManifest is the repository's manifest: a web service answering its
// commit on /version, a volume, and a public route at the preview's slug.
func ghManifest(app, image string) string {
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[spec.variables]
domain = "%s.prod.test"

[spec.previews]
visibility = "public"
[spec.previews.variables]
domain = "${{ env.slug }}.preview.test"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
VERSION = "${{ git.sha }}"
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
[[spec.services.mounts]]
volume = "data"
target = "/data"

[[spec.volumes]]
name = "data"

[[spec.routes]]
hostname = "${{ vars.domain }}"
service = "web"
port = 8080
visibility = "public"
`, app, app, image)
}

// ghDashboard is a signed-in dashboard session of the dev user (made in
// the store, as the login form would), keeping its CSRF token.
type ghDashboard struct {
	t      *testing.T
	base   string
	cookie string
	csrf   string
	http   *http.Client
}

func newGHDashboard(t *testing.T, st *store.Store, base string) *ghDashboard {
	t.Helper()
	ctx := context.Background()
	u, err := st.GetUserByEmail(ctx, appservice.BootstrapEmail)
	ghMust(t, err)
	secret := auth.NewSecret("")
	_, err = st.CreateSession(ctx, store.Session{ID: store.HashToken(secret), UserID: u.ID, CSRFSecret: []byte(auth.NewSecret("")), ExpiresAt: time.Now().Add(time.Hour)})
	ghMust(t, err)
	return &ghDashboard{t: t, base: base, cookie: secret, http: &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (d *ghDashboard) do(method, path string, form url.Values) (*http.Response, string) {
	d.t.Helper()
	var body io.Reader
	if form != nil {
		form.Set("_csrf", d.csrf)
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, d.base+path, body)
	ghMust(d.t, err)
	req.AddCookie(&http.Cookie{Name: "slipway_session", Value: d.cookie})
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := d.http.Do(req)
	ghMust(d.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if i := strings.Index(string(b), `name="csrf-token" content="`); i >= 0 {
		rest := string(b)[i+len(`name="csrf-token" content="`):]
		d.csrf = rest[:strings.Index(rest, `"`)]
	}
	return resp, string(b)
}

// ghDev is `slipway dev` with its own gateway, wired to a fake GitHub
// whose installation holds the repository at repoURL and is bound to the
// dev team through Connect GitHub and the setup callback.
type ghDev struct {
	base, token string
	gwPort      int
	fake        *githubtest.Server
	secret      []byte // the webhook secret
	pool        *pgxpool.Pool
	dash        *ghDashboard
	setupState  string // the state the setup callback consumed
}

func startGitHubDev(t *testing.T, bin, gatewayName, dir, repoURL string) *ghDev {
	t.Helper()
	fake := githubtest.New(t)
	fake.AddInstallation(ghInstallation, "acme", githubtest.Repo{ID: ghRepoID, FullName: ghRepo, CloneURL: repoURL})
	keyFile, secretFile := filepath.Join(dir, "app.pem"), filepath.Join(dir, "webhook-secret")
	ghMust(t, os.WriteFile(keyFile, fake.KeyPEM, 0o600))
	ghMust(t, os.WriteFile(secretFile, []byte(fake.WebhookSecret), 0o600))

	dbURL := storetest.NewDatabaseURL(t)
	pool, err := pgxpool.New(context.Background(), dbURL)
	ghMust(t, err)
	t.Cleanup(pool.Close)

	tokenFile := filepath.Join(dir, "token")
	gwPort := freePort(t)
	cmd := exec.Command(bin, "dev", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--bootstrap-token-file", tokenFile)
	cmd.Env = append(withoutEnv(os.Environ(), "DATABASE_URL"),
		"DATABASE_URL="+dbURL,
		"SLIPWAY_IMAGES_PULL=false",
		"SLIPWAY_GATEWAY_NAME="+gatewayName,
		"SLIPWAY_GATEWAY_HTTP_PORT="+strconv.Itoa(gwPort),
		"SLIPWAY_GATEWAY_HTTPS_PORT=0",
		"SLIPWAY_PUBLIC_URL=http://slipway.e2e.test",
		"SLIPWAY_GITHUB_API_URL="+fake.URL,
		"SLIPWAY_GITHUB_APP_ID="+strconv.FormatInt(fake.AppID, 10),
		"SLIPWAY_GITHUB_APP_SLUG="+fake.Slug,
		"SLIPWAY_GITHUB_PRIVATE_KEY_FILE="+keyFile,
		"SLIPWAY_GITHUB_WEBHOOK_SECRET_FILE="+secretFile,
	)
	base := startDev(t, cmd, tokenFile)
	raw, err := os.ReadFile(tokenFile)
	ghMust(t, err)

	// Connect GitHub: the setup callback binds the installation with the
	// state Connect GitHub signed.
	dash := newGHDashboard(t, store.New(pool), base)
	if resp, body := dash.do(http.MethodGet, "/github", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /github: %d %.500s", resp.StatusCode, body)
	}
	resp, _ := dash.do(http.MethodPost, "/github/connect", url.Values{})
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusSeeOther || loc.Query().Get("state") == "" {
		t.Fatalf("Connect GitHub: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	state := loc.Query().Get("state")
	if resp, body := dash.do(http.MethodGet, "/github/setup?installation_id="+strconv.FormatInt(ghInstallation, 10)+"&state="+url.QueryEscape(state), nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("setup callback: %d %.500s", resp.StatusCode, body)
	}
	return &ghDev{
		base: base, token: strings.TrimSpace(string(raw)), gwPort: gwPort, fake: fake,
		secret: []byte(fake.WebhookSecret), pool: pool, dash: dash, setupState: state,
	}
}

// connectApplication applies an empty application named appName and
// connects it to the repository from the GitHub page, returning its id.
func (g *ghDev) connectApplication(t *testing.T, appName string) string {
	t.Helper()
	var applied struct {
		Application struct {
			ID string `json:"id"`
		} `json:"application"`
	}
	api(t, "POST", g.base+"/api/v1/applications/apply", g.token, "application/toml",
		"api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \""+appName+"\"\n", &applied)
	g.dash.do(http.MethodGet, "/github", nil)
	if resp, body := g.dash.do(http.MethodPost, "/github/repositories/connect", url.Values{
		"installation_id": {strconv.FormatInt(ghInstallation, 10)}, "repository_id": {strconv.FormatInt(ghRepoID, 10)}, "application": {applied.Application.ID},
	}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("connect repository: %d %.1000s", resp.StatusCode, body)
	}
	return applied.Application.ID
}

// ghPullRequest is a signed pull_request delivery.
func ghPullRequest(action string, number int, branch, sha, author string, headRepo int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"action": action, "number": number,
		"installation": map[string]any{"id": ghInstallation},
		"repository":   map[string]any{"id": ghRepoID, "full_name": ghRepo},
		"pull_request": map[string]any{
			"number": number, "user": map[string]any{"login": author},
			"head": map[string]any{"ref": branch, "sha": sha, "repo": map[string]any{"id": headRepo}},
		},
	})
	return b
}

// ghComment is a check for eventually: pull request number of ghRepo has
// exactly one comment, holding each of want.
func ghComment(fake *githubtest.Server, number int, want ...string) func() (bool, string) {
	return func() (bool, string) {
		cs := fake.Comments(ghRepo, number)
		if len(cs) != 1 {
			return false, fmt.Sprintf("%d comments: %+v", len(cs), cs)
		}
		for _, w := range want {
			if !strings.Contains(cs[0].Body, w) {
				return false, cs[0].Body
			}
		}
		return true, ""
	}
}

func postWebhook(t *testing.T, base, delivery, event string, body []byte, signature string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/webhooks/github", strings.NewReader(string(body)))
	ghMust(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", signature)
	resp, err := http.DefaultClient.Do(req)
	ghMust(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func eventually(t *testing.T, what string, within time.Duration, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		done, last := ok()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s; last: %s", what, within, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func envObjectCount(t *testing.T, cli *client.Client, envID string) (services, networks, volumes int) {
	t.Helper()
	ctx := context.Background()
	f := filters.NewArgs(filters.Arg("label", slwswarm.LabelEnv+"="+envID))
	svcs, err := cli.ServiceList(ctx, swarm.ServiceListOptions{Filters: f})
	ghMust(t, err)
	nets, err := cli.NetworkList(ctx, network.ListOptions{Filters: f})
	ghMust(t, err)
	vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	ghMust(t, err)
	return len(svcs), len(nets), len(vols.Volumes)
}

// TestGitHub_PullRequestPreviewLifecycle runs `slipway dev` against the fake
// GitHub API: Connect GitHub and the setup callback bind the installation,
// an application connects to its repository, and signed pull_request
// deliveries deploy, redeploy and delete the preview on the real Swarm,
// reachable through the gateway, with one comment kept up to date.
func TestGitHub_PullRequestPreviewLifecycle(t *testing.T) {
	t.Parallel()
	bin := slipwayBinary(t)
	cli := swarmtest.Client(t)
	image := swarmtest.Image(t, "web")
	id := swarmtest.ID()
	appName := "notes-" + strings.ToLower(id)
	gatewayName := "slipway-gw-gh-" + id
	envs := devCleanup(t, cli, gatewayName)

	dir, err := os.MkdirTemp("", "slipway-github-e2e-")
	ghMust(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	ghMust(t, os.Chmod(dir, 0o755))

	repo := newGHRepo(t, filepath.Join(dir, "notes.git"))
	repo.commit("main", ghManifest(appName, image), "main")
	sha1 := repo.commit("feature", ghManifest(appName, image)+"\n# feature 1\n", "feature 1")

	gh := startGitHubDev(t, bin, gatewayName, dir, repo.url())
	fake, pool, base, token, gwPort, secret := gh.fake, gh.pool, gh.base, gh.token, gh.gwPort, gh.secret
	fake.SetPermission(ghRepo, "wendy", "write")
	// A replayed setup callback binds nothing more and is refused.
	if resp, _ := gh.dash.do(http.MethodGet, "/github/setup?installation_id="+strconv.FormatInt(ghInstallation, 10)+"&state="+url.QueryEscape(gh.setupState), nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("replayed setup callback: %d, want 400", resp.StatusCode)
	}
	gh.connectApplication(t, appName)

	// A forged signature is refused before anything is stored.
	opened := ghPullRequest("opened", 7, "feature", sha1, "wendy", ghRepoID)
	if code := postWebhook(t, base, "forged-"+id, "pull_request", opened, webhook.SignatureHeader([]byte("not-the-secret"), opened)); code != http.StatusUnauthorized {
		t.Fatalf("forged delivery: %d, want 401", code)
	}
	var deliveries, ghJobs int
	ghMust(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM github_webhook_deliveries`).Scan(&deliveries))
	ghMust(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind LIKE 'github_%'`).Scan(&ghJobs))
	if deliveries != 0 || ghJobs != 0 {
		t.Fatalf("a forged delivery left %d deliveries and %d jobs", deliveries, ghJobs)
	}

	// Opened by a writer: the preview deploys and answers through the
	// gateway at its slug's hostname.
	if code := postWebhook(t, base, "open-"+id, "pull_request", opened, webhook.SignatureHeader(secret, opened)); code != http.StatusAccepted {
		t.Fatalf("opened delivery: %d", code)
	}
	if code := postWebhook(t, base, "open-"+id, "pull_request", opened, webhook.SignatureHeader(secret, opened)); code != http.StatusOK {
		t.Errorf("replayed delivery: %d, want 200 (duplicate)", code)
	}
	type preview struct {
		ID, Slug, Branch string
		Deployment       *struct{ ID, State string }
	}
	previews := func() []preview {
		var l struct{ Previews []preview }
		api(t, "GET", base+"/api/v1/applications/"+appName+"/previews", token, "", "", &l)
		return l.Previews
	}
	var pv preview
	eventually(t, "preview deployed", 5*time.Minute, func() (bool, string) {
		l := previews()
		if len(l) != 1 || l[0].Deployment == nil {
			return false, fmt.Sprintf("%+v", l)
		}
		pv = l[0]
		envs.Add(pv.ID)
		if pv.Deployment.State == "failed" {
			t.Fatalf("preview deployment failed: %+v", pv)
		}
		return pv.Deployment.State == "succeeded", pv.Deployment.State
	})
	host := pv.Slug + ".preview.test"
	gw := fmt.Sprintf("http://127.0.0.1:%d/version", gwPort)
	serves := func(sha string) func() (bool, string) {
		return func() (bool, string) {
			status, body, err := get(gw, host)
			return err == nil && status == http.StatusOK && strings.TrimSpace(body) == sha, fmt.Sprintf("%d %q %v", status, body, err)
		}
	}
	eventually(t, "preview through the gateway", 90*time.Second, serves(sha1))

	comment := func(number int, want ...string) func() (bool, string) { return ghComment(fake, number, want...) }
	eventually(t, "ready comment", 60*time.Second, comment(7, "Ready", "https://"+host, sha1[:12], "http://slipway.e2e.test/applications/"))
	success := func(sha string) func() (bool, string) {
		return func() (bool, string) {
			var last githubtest.Status
			for _, s := range fake.Statuses(ghRepo) {
				if s.SHA == sha {
					last = s
				}
			}
			return last.State == "success" && last.TargetURL != "", fmt.Sprintf("%+v", last)
		}
	}
	eventually(t, "success status", 60*time.Second, success(sha1))

	// Synchronize: the same comment, the new commit.
	sha2 := repo.commit("feature", ghManifest(appName, image)+"\n# feature 2\n", "feature 2")
	sync := ghPullRequest("synchronize", 7, "feature", sha2, "wendy", ghRepoID)
	if code := postWebhook(t, base, "sync-"+id, "pull_request", sync, webhook.SignatureHeader(secret, sync)); code != http.StatusAccepted {
		t.Fatalf("synchronize delivery: %d", code)
	}
	eventually(t, "redeployed preview through the gateway", 5*time.Minute, serves(sha2))
	eventually(t, "updated comment", 60*time.Second, comment(7, "Ready", sha2[:12]))
	eventually(t, "success status of the new head", 60*time.Second, success(sha2))

	// A fork's pull request deploys nothing and asks for an approval.
	fork := ghPullRequest("opened", 8, "main", strings.Repeat("f", 40), "mallory", ghForkRepoID)
	if code := postWebhook(t, base, "fork-"+id, "pull_request", fork, webhook.SignatureHeader(secret, fork)); code != http.StatusAccepted {
		t.Fatalf("fork delivery: %d", code)
	}
	eventually(t, "approval comment", 60*time.Second, comment(8, "approve"))
	if l := previews(); len(l) != 1 {
		t.Errorf("the fork's pull request created a preview: %+v", l)
	}

	// Closed: the preview and everything it owns are gone; the comment
	// says removed.
	closed := ghPullRequest("closed", 7, "feature", sha2, "wendy", ghRepoID)
	if code := postWebhook(t, base, "close-"+id, "pull_request", closed, webhook.SignatureHeader(secret, closed)); code != http.StatusAccepted {
		t.Fatalf("closed delivery: %d", code)
	}
	eventually(t, "removed comment", 2*time.Minute, comment(7, "Removed"))
	eventually(t, "preview objects removed", 3*time.Minute, func() (bool, string) {
		s, n, v := envObjectCount(t, cli, pv.ID)
		return s == 0 && n == 0 && v == 0 && len(previews()) == 0, fmt.Sprintf("services %d networks %d volumes %d", s, n, v)
	})
}
