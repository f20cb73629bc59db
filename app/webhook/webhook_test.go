package webhook_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/app/webhook"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

const (
	installationID = int64(77)
	repoID         = int64(1)
	repoName       = "acme/notes"
)

// fixture is a signed payload from testdata.
type fixture struct {
	event string
	body  []byte
	sig   string
}

func loadFixture(t testing.TB, name string) fixture {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := os.ReadFile(filepath.Join("testdata", name+".sig"))
	if err != nil {
		t.Fatal(err)
	}
	event := name
	for _, e := range []string{"installation_repositories", "installation", "pull_request", "push", "ping"} {
		if strings.HasPrefix(name, e) {
			event = e
			break
		}
	}
	return fixture{event: event, body: body, sig: strings.TrimSpace(string(sig))}
}

func fixtureSecret(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "secret.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// fakePreviews stands in for the preview machinery: it creates a real
// preview environment, hostname and deployment row, so notifications read
// real data, and records every call.
type fakePreviews struct {
	st *store.Store
	mu sync.Mutex
	// ensured and deleted are "app branch sha" and "app branch".
	ensured []string
	deleted []string
}

func (f *fakePreviews) EnsurePreview(ctx context.Context, teamID, appID, branch, headSHA string) (string, error) {
	f.mu.Lock()
	f.ensured = append(f.ensured, appID+" "+branch+" "+headSHA)
	f.mu.Unlock()
	env, err := f.st.GetPreview(ctx, teamID, appID, branch, "")
	if err != nil {
		slug := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(branch), "-"), "-")
		env, err = f.st.CreateEnvironment(ctx, teamID, store.EnvironmentParams{
			ApplicationID: appID, Kind: store.KindPreview, Name: "notes-" + slug, Branch: branch, Slug: "notes-" + slug,
		})
		if err != nil {
			return "", err
		}
		if err := f.st.SetEnvironmentHostnames(ctx, teamID, env.ID, []string{env.Slug + ".preview.test"}); err != nil {
			return "", err
		}
	}
	d, err := f.st.CreateDeployment(ctx, teamID, store.DeploymentParams{EnvironmentID: env.ID, Origin: store.OriginBuild, Actor: "github"})
	return d.ID, err
}

func (f *fakePreviews) DeletePreview(_ context.Context, _, appID, branch string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, appID+" "+branch)
	return nil
}

func (f *fakePreviews) calls() (ensured, deleted []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ensured...), append([]string(nil), f.deleted...)
}

type testBundle struct {
	ctx      context.Context
	st       *store.Store
	fake     *githubtest.Server
	client   *river.Client[pgx.Tx]
	url      string
	previews *fakePreviews
	team     store.Team
	user     store.User
	app      store.Application
	secret   []byte
	metrics  *metrics.Registry
}

// setup builds the intake on a real listener over a fresh database; with
// work, a River client also runs the GitHub jobs against the fake API.
func setup(t testing.TB, work bool) *testBundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	fake := githubtest.New(t)
	fake.AddInstallation(installationID, "acme", githubtest.Repo{ID: repoID, FullName: repoName}, githubtest.Repo{ID: 2, FullName: "acme/other"})
	fake.SetPermission(repoName, "wendy", "write")
	fake.SetPermission(repoName, "rita", "read")
	gh, err := github.New(fake.Config(), github.Options{Retry: github.RetryPolicy{BaseDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{ctx: ctx, st: st, fake: fake, previews: &fakePreviews{st: st}, secret: fixtureSecret(t)}

	if b.team, err = st.CreateTeam(ctx, "Acme", "acme"); err != nil {
		t.Fatal(err)
	}
	if b.user, err = st.CreateUser(ctx, "ada@example.com", "Ada", "hash"); err != nil {
		t.Fatal(err)
	}
	if err := st.AddMember(ctx, b.team.ID, b.user.ID, store.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if b.app, err = st.CreateApplication(ctx, b.team.ID, "notes"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.BindGitHubInstallation(ctx, b.team.ID, installationID, b.user.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.LinkGitHubRepository(ctx, b.team.ID, b.app.ID, installationID, repoID, repoName); err != nil {
		t.Fatal(err)
	}

	workers := river.NewWorkers()
	if err := jobs.RegisterGitHub(workers, jobs.GitHubDeps{
		Store: st, GitHub: gh, Previews: b.previews, PublicURL: "https://slipway.test",
		Logger: slog.New(slog.DiscardHandler),
	}); err != nil {
		t.Fatal(err)
	}
	cfg := &river.Config{Workers: workers, Logger: slog.New(slog.DiscardHandler)}
	if work {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}}
		cfg.FetchPollInterval = 20 * time.Millisecond
		cfg.FetchCooldown = 5 * time.Millisecond
	}
	if b.client, err = river.NewClient(riverpgxv5.New(st.Pool()), cfg); err != nil {
		t.Fatal(err)
	}
	if work {
		if err := b.client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = b.client.Stop(stop)
		})
	}
	b.metrics = metrics.New(nil)
	srv := httptest.NewServer(webhook.New(webhook.Config{
		Store: st, Jobs: b.client, Secret: webhook.StaticSecret(b.secret), Logger: slog.New(slog.DiscardHandler),
		Metrics: b.metrics,
	}))
	t.Cleanup(srv.Close)
	b.url = srv.URL + "/webhooks/github"
	return b
}

func (b *testBundle) postRaw(t testing.TB, event, delivery string, body io.Reader, sig string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(b.ctx, http.MethodPost, b.url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func (b *testBundle) post(t testing.TB, name, delivery string) int {
	t.Helper()
	f := loadFixture(t, name)
	return b.postRaw(t, f.event, delivery, bytes.NewReader(f.body), f.sig)
}

func (b *testBundle) count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.st.Pool().QueryRow(b.ctx, sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (b *testBundle) jobCount(t testing.TB, kind string) int {
	return b.count(t, `SELECT count(*) FROM river_job WHERE kind = $1`, kind)
}

// settle waits until no job is left to run, failing on a job that errored.
func (b *testBundle) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b.count(t, `SELECT count(*) FROM river_job WHERE cardinality(errors) > 0`) > 0 {
			rows, _ := b.st.Pool().Query(b.ctx, `SELECT kind, errors::text FROM river_job WHERE cardinality(errors) > 0`)
			for rows.Next() {
				var kind, errs string
				_ = rows.Scan(&kind, &errs)
				t.Errorf("job %s errored: %s", kind, errs)
			}
			rows.Close()
			t.FailNow()
		}
		if b.count(t, `SELECT count(*) FROM river_job WHERE state NOT IN ('completed', 'cancelled', 'discarded')`) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("jobs did not finish within 30 s")
}

// appComments returns the comments carrying the application's marker.
func (b *testBundle) appComments(number int) []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range b.fake.Comments(repoName, number) {
		if strings.Contains(c.Body, github.Marker(b.app.ID)) {
			out = append(out, c)
		}
	}
	return out
}

var resign = flag.Bool("resign", false, "rewrite testdata/*.sig from testdata/secret.txt")

// insertTx inserts a job in tx's transaction with the test's River client.
func (b *testBundle) insertTx(ctx context.Context, tx *store.Store, args river.JobArgs) error {
	_, err := b.client.InsertTx(ctx, tx.Tx(), args, nil)
	return err
}

func TestFixtures_AreSigned(t *testing.T) {
	t.Parallel()
	secret := fixtureSecret(t)
	names, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("fixtures: %v %v", names, err)
	}
	for _, n := range names {
		if *resign {
			body, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			sig := webhook.SignatureHeader(secret, body) + "\n"
			if err := os.WriteFile(strings.TrimSuffix(n, ".json")+".sig", []byte(sig), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f := loadFixture(t, strings.TrimSuffix(filepath.Base(n), ".json"))
		if !webhook.VerifySignature(secret, f.body, f.sig) {
			t.Errorf("%s: its .sig does not sign it (after editing a fixture, run go test -run Fixtures ./app/webhook/ -args -resign)", n)
		}
	}
}

func TestHandler_RejectsForgedSignatures(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	f := loadFixture(t, "pull_request_opened")
	tampered := bytes.Replace(f.body, []byte(`"wendy"`), []byte(`"evil"`), 1)
	tests := []struct {
		name string
		body []byte
		sig  string
	}{
		{name: "no signature", body: f.body},
		{name: "other secret", body: f.body, sig: webhook.SignatureHeader([]byte("not-the-secret"), f.body)},
		{name: "tampered body", body: tampered, sig: f.sig},
		{name: "sha1 style", body: f.body, sig: "sha1=" + strings.TrimPrefix(f.sig, "sha256=")[:40]},
		{name: "truncated", body: f.body, sig: f.sig[:len(f.sig)-2]},
		{name: "not hex", body: f.body, sig: "sha256=" + strings.Repeat("zz", 32)},
	}
	for i, tt := range tests {
		if code := b.postRaw(t, "pull_request", fmt.Sprintf("forged-%d", i), bytes.NewReader(tt.body), tt.sig); code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", tt.name, code)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM github_webhook_deliveries`); n != 0 {
		t.Fatalf("%d deliveries stored from forged requests", n)
	}
	if n := b.count(t, `SELECT count(*) FROM river_job`); n != 0 {
		t.Fatalf("%d jobs enqueued from forged requests", n)
	}
}

func TestHandler_ReplayIsProcessedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	if code := b.post(t, "pull_request_opened", "delivery-1"); code != http.StatusAccepted {
		t.Fatalf("first: status %d, want 202", code)
	}
	for range 3 {
		if code := b.post(t, "pull_request_opened", "delivery-1"); code != http.StatusOK {
			t.Fatalf("replay: status %d, want 200", code)
		}
	}
	if n := b.jobCount(t, "github_pull_request"); n != 1 {
		t.Fatalf("jobs = %d, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM github_webhook_deliveries WHERE delivery_id = 'delivery-1' AND event = 'pull_request' AND action = 'opened' AND installation_id = 77`); n != 1 {
		t.Fatalf("recorded deliveries = %d, want 1", n)
	}
}

// The intake counts deliveries by event and outcome; an unverified
// delivery is counted without its claimed event name, so forged headers
// cannot grow the label set.
func TestHandler_CountsDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.post(t, "pull_request_opened", "count-1")
	b.post(t, "pull_request_opened", "count-1")
	b.post(t, "pull_request_opened", "count-1")
	f := loadFixture(t, "pull_request_opened")
	b.postRaw(t, "forged-event-name", "count-2", bytes.NewReader(f.body), "sha256="+strings.Repeat("0", 64))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer t")
	b.metrics.Handler("t").ServeHTTP(rec, req)
	text := rec.Body.String()
	for _, want := range []string{
		`slipway_webhook_deliveries_total{event="pull_request",outcome="accepted"} 1`,
		`slipway_webhook_deliveries_total{event="pull_request",outcome="duplicate"} 2`,
		`slipway_webhook_deliveries_total{event="unverified",outcome="rejected"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "forged-event-name") {
		t.Error("an unverified event name became a label")
	}
}

func TestHandler_BodyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	big := append([]byte(`{"action":"opened","pad":"`), bytes.Repeat([]byte("x"), webhook.MaxBody)...)
	big = append(big, `"}`...)
	sig := webhook.SignatureHeader(b.secret, big)
	if code := b.postRaw(t, "pull_request", "big-1", bytes.NewReader(big), sig); code != http.StatusRequestEntityTooLarge {
		t.Errorf("with Content-Length: status %d, want 413", code)
	}
	// Without Content-Length (chunked), the limit holds while reading.
	if code := b.postRaw(t, "pull_request", "big-2", io.MultiReader(bytes.NewReader(big)), sig); code != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked: status %d, want 413", code)
	}
	if n := b.count(t, `SELECT count(*) FROM github_webhook_deliveries`) + b.count(t, `SELECT count(*) FROM river_job`); n != 0 {
		t.Fatalf("%d rows stored for oversized bodies", n)
	}
}

func TestHandler_Events(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	tests := []struct {
		fixture string
		kind    string // "" = recorded, no job
	}{
		{"ping", ""},
		{"push", "github_push"},
		{"push_tag", ""},
		{"pull_request_labeled", ""},
		{"pull_request_opened", "github_pull_request"},
		{"installation_created", "github_installation"},
		{"installation_repositories_removed", "github_installation"},
	}
	for _, tt := range tests {
		before := b.count(t, `SELECT count(*) FROM river_job`)
		if code := b.post(t, tt.fixture, "d-"+tt.fixture); code != http.StatusAccepted {
			t.Fatalf("%s: status %d", tt.fixture, code)
		}
		added := b.count(t, `SELECT count(*) FROM river_job`) - before
		switch {
		case tt.kind == "" && added != 0:
			t.Errorf("%s: %d jobs, want none", tt.fixture, added)
		case tt.kind != "" && (added != 1 || b.count(t, `SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'delivery_id' = $2`, tt.kind, "d-"+tt.fixture) != 1):
			t.Errorf("%s: want one %s job, got %d new jobs", tt.fixture, tt.kind, added)
		}
		processed := b.count(t, `SELECT count(*) FROM github_webhook_deliveries WHERE delivery_id = $1 AND processed_at IS NOT NULL`, "d-"+tt.fixture)
		if (tt.kind == "") != (processed == 1) {
			t.Errorf("%s: processed = %d", tt.fixture, processed)
		}
	}
	// Valid signature, missing delivery id: refused, nothing stored.
	f := loadFixture(t, "push")
	if code := b.postRaw(t, "push", "", bytes.NewReader(f.body), f.sig); code != http.StatusBadRequest {
		t.Errorf("no delivery id: status %d, want 400", code)
	}
}

func TestPullRequest_SameRepositoryWriter(t *testing.T) {
	t.Parallel()
	b := setup(t, true)

	// opened: the preview is deployed and one comment appears.
	if code := b.post(t, "pull_request_opened", "pr-open"); code != http.StatusAccepted {
		t.Fatalf("status %d", code)
	}
	b.settle(t)
	ensured, _ := b.previews.calls()
	if want := b.app.ID + " feat/login " + strings.Repeat("a", 40); len(ensured) != 1 || ensured[0] != want {
		t.Fatalf("EnsurePreview calls = %q, want [%q]", ensured, want)
	}
	comments := b.appComments(5)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "Queued") || !strings.Contains(comments[0].Body, "aaaaaaaaaaaa") {
		t.Fatalf("comments after opened = %+v", comments)
	}
	firstID := comments[0].ID
	pr, err := b.st.FindGitHubPullRequest(b.ctx, b.team.ID, b.app.ID, repoID, 5)
	if err != nil || pr.CommentID != firstID || pr.DeploymentID == "" {
		t.Fatalf("pull request row = %+v, %v", pr, err)
	}
	statuses := b.fake.Statuses(repoName)
	wantURL := "https://slipway.test/applications/" + b.app.ID + "/deployments/" + pr.DeploymentID
	if len(statuses) == 0 || statuses[0].Context != "slipway/notes" || statuses[0].State != "pending" ||
		statuses[0].TargetURL != wantURL || statuses[0].SHA != strings.Repeat("a", 40) {
		t.Fatalf("statuses = %+v, want a pending slipway/notes status linking %s", statuses, wantURL)
	}

	// synchronize: redeployed at the new head, the same comment updated.
	if code := b.post(t, "pull_request_synchronize", "pr-sync"); code != http.StatusAccepted {
		t.Fatalf("status %d", code)
	}
	b.settle(t)
	ensured, _ = b.previews.calls()
	if len(ensured) != 2 || !strings.HasSuffix(ensured[1], strings.Repeat("b", 40)) {
		t.Fatalf("EnsurePreview calls = %q", ensured)
	}
	comments = b.appComments(5)
	if len(comments) != 1 || comments[0].ID != firstID || comments[0].Updates == 0 || !strings.Contains(comments[0].Body, "bbbbbbbbbbbb") {
		t.Fatalf("comments after synchronize = %+v, want comment %d updated with the new SHA", comments, firstID)
	}

	// The deployment succeeds: the pipeline's notification shows the URL.
	pr, _ = b.st.FindGitHubPullRequest(b.ctx, b.team.ID, b.app.ID, repoID, 5)
	for _, step := range [][2]store.DeploymentState{
		{store.StateRequested, store.StateCapturing}, {store.StateCapturing, store.StatePreparing},
		{store.StatePreparing, store.StateRollingOut}, {store.StateRollingOut, store.StateSucceeded},
	} {
		if _, err := b.st.TransitionDeployment(b.ctx, b.team.ID, pr.DeploymentID, []store.DeploymentState{step[0]}, step[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.client.Insert(b.ctx, jobs.GitHubNotifyArgs{TeamID: b.team.ID, DeploymentID: pr.DeploymentID}, nil); err != nil {
		t.Fatal(err)
	}
	b.settle(t)
	comments = b.appComments(5)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "Ready") ||
		!strings.Contains(comments[0].Body, "https://notes-feat-login.preview.test") {
		t.Fatalf("comment after success = %+v", comments)
	}
	statuses = b.fake.Statuses(repoName)
	if last := statuses[len(statuses)-1]; last.State != "success" || last.SHA != strings.Repeat("b", 40) {
		t.Fatalf("last status = %+v, want success on the new head", last)
	}

	// closed: the preview is deleted and the comment says removed.
	if code := b.post(t, "pull_request_closed", "pr-close"); code != http.StatusAccepted {
		t.Fatalf("status %d", code)
	}
	b.settle(t)
	_, deleted := b.previews.calls()
	if len(deleted) != 1 || deleted[0] != b.app.ID+" feat/login" {
		t.Fatalf("DeletePreview calls = %q", deleted)
	}
	comments = b.appComments(5)
	if len(comments) != 1 || comments[0].ID != firstID || !strings.Contains(comments[0].Body, "Removed") {
		t.Fatalf("comments after closed = %+v", comments)
	}
}

func TestPullRequest_FailureComment(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	b.post(t, "pull_request_opened", "pr-open")
	b.settle(t)
	pr, err := b.st.FindGitHubPullRequest(b.ctx, b.team.ID, b.app.ID, repoID, 5)
	if err != nil {
		t.Fatal(err)
	}
	steps := `[{"name":"prepare","state":"failed","message":"build web failed","output":"step 3/5: RUN make\nmake: *** no rule","started_at":"2026-01-01T00:00:00Z"}]`
	if err := b.st.SetDeploymentSteps(b.ctx, b.team.ID, pr.DeploymentID, []byte(steps)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.FailDeployment(b.ctx, b.team.ID, pr.DeploymentID, "build_failed", "the build of web failed"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Insert(b.ctx, jobs.GitHubNotifyArgs{TeamID: b.team.ID, DeploymentID: pr.DeploymentID}, nil); err != nil {
		t.Fatal(err)
	}
	b.settle(t)
	c := b.appComments(5)
	if len(c) != 1 || !strings.Contains(c[0].Body, "Failed") || !strings.Contains(c[0].Body, "**prepare**") ||
		!strings.Contains(c[0].Body, "make: *** no rule") || !strings.Contains(c[0].Body, "build_failed") {
		t.Fatalf("failure comment = %+v", c)
	}
	st := b.fake.Statuses(repoName)
	if last := st[len(st)-1]; last.State != "failure" {
		t.Fatalf("last status = %+v", last)
	}
}

func TestPullRequest_NeedsApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fixture string
		number  int
		author  string
		wantRef string
	}{
		{name: "fork", fixture: "pull_request_fork_opened", number: 6, wantRef: "pull/6/head"},
		{name: "author without write", fixture: "pull_request_opened", number: 5, author: "rita", wantRef: "feat/login"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, true)
			if tt.author != "" {
				// The fixture's author loses write permission.
				b.fake.SetPermission(repoName, "wendy", "read")
			}
			if code := b.post(t, tt.fixture, "pr-"+tt.name); code != http.StatusAccepted {
				t.Fatalf("status %d", code)
			}
			b.settle(t)
			if ensured, _ := b.previews.calls(); len(ensured) != 0 {
				t.Fatalf("EnsurePreview was called: %q", ensured)
			}
			c := b.appComments(tt.number)
			if len(c) != 1 || !strings.Contains(c[0].Body, "must approve") {
				t.Fatalf("comments = %+v, want one approval comment", c)
			}
			pending, err := b.st.ListPendingGitHubPullRequests(b.ctx, b.team.ID, b.app.ID)
			if err != nil || len(pending) != 1 {
				t.Fatalf("pending = %+v, %v", pending, err)
			}
			if n := len(b.fake.Statuses(repoName)); n != 0 {
				t.Fatalf("%d statuses set for a PR waiting for approval", n)
			}

			// A member approves: the preview deploys, from the PR's ref.
			if err := jobs.ApproveGitHubPreview(b.ctx, b.st, b.insertTx, b.team.ID, pending[0].ID, b.user.ID); err != nil {
				t.Fatal(err)
			}
			b.settle(t)
			ensured, _ := b.previews.calls()
			if len(ensured) != 1 || !strings.Contains(ensured[0], " "+tt.wantRef+" ") {
				t.Fatalf("EnsurePreview after approval = %q, want ref %s", ensured, tt.wantRef)
			}
			if c := b.appComments(tt.number); len(c) != 1 || !strings.Contains(c[0].Body, "Queued") {
				t.Fatalf("comment after approval = %+v", c)
			}
		})
	}
}

func TestPush_RecordsHintOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	if code := b.post(t, "push", "push-1"); code != http.StatusAccepted {
		t.Fatalf("status %d", code)
	}
	b.settle(t)
	events, err := b.st.ListEvents(b.ctx, b.team.ID, store.EventFilter{ObjectType: "application", ObjectID: b.app.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Verb != "branch_push_hint" || !strings.Contains(string(events[0].Details), `"branch": "main"`) {
		t.Fatalf("events = %+v", events)
	}
	if strings.Contains(string(events[0].Details), strings.Repeat("d", 40)) {
		t.Fatal("the hint carries the pushed commit; sync must list heads itself")
	}
	if ensured, _ := b.previews.calls(); len(ensured) != 0 {
		t.Fatalf("a push deployed: %q", ensured)
	}
}

func TestInstallation_DeletedDisconnects(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	if code := b.post(t, "installation_deleted", "inst-del"); code != http.StatusAccepted {
		t.Fatalf("status %d", code)
	}
	b.settle(t)
	inst, err := b.st.GitHubInstallationByID(b.ctx, installationID)
	if err != nil || inst.DeletedAt == nil || inst.Active() {
		t.Fatalf("installation = %+v, %v", inst, err)
	}
	if _, err := b.st.GetGitHubRepositoryLink(b.ctx, b.team.ID, b.app.ID); err == nil {
		t.Fatal("the repository link survived the uninstall")
	}
	// Later events of the installation act on nothing.
	b.post(t, "pull_request_opened", "after-del")
	b.settle(t)
	if ensured, _ := b.previews.calls(); len(ensured) != 0 || len(b.fake.Comments(repoName, 5)) != 0 {
		t.Fatalf("an uninstalled installation's PR deployed %q", ensured)
	}
}

func TestInstallation_SuspendIgnoresEvents(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	b.post(t, "installation_suspend", "inst-susp")
	b.settle(t)
	b.post(t, "pull_request_opened", "after-susp")
	b.settle(t)
	if ensured, _ := b.previews.calls(); len(ensured) != 0 {
		t.Fatalf("a suspended installation's PR deployed %q", ensured)
	}
	if _, err := b.st.GetGitHubRepositoryLink(b.ctx, b.team.ID, b.app.ID); err != nil {
		t.Fatalf("suspension must keep links for unsuspend: %v", err)
	}
}

// A push deploy of an environment (no pull request) gets its commit status
// on the environment's commit.
func TestNotify_EnvironmentStatus(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	sha := strings.Repeat("e", 40)
	env, err := b.st.CreateEnvironment(b.ctx, b.team.ID, store.EnvironmentParams{
		ApplicationID: b.app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "notes-production",
		Branch: "main", Commit: sha, Sync: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.st.CreateDeployment(b.ctx, b.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Origin: store.OriginBuild})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.FailDeployment(b.ctx, b.team.ID, d.ID, "rollout_failed", "web did not converge"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Insert(b.ctx, jobs.GitHubNotifyArgs{TeamID: b.team.ID, DeploymentID: d.ID}, nil); err != nil {
		t.Fatal(err)
	}
	b.settle(t)
	st := b.fake.Statuses(repoName)
	if len(st) != 1 || st[0].SHA != sha || st[0].State != "failure" || st[0].Context != "slipway/notes/production" ||
		!strings.HasSuffix(st[0].TargetURL, "/deployments/"+d.ID) {
		t.Fatalf("statuses = %+v", st)
	}
	if n := len(b.fake.Comments(repoName, 5)); n != 0 {
		t.Fatalf("%d comments for an environment deployment", n)
	}
}

// GitHub being down delays the comment, never the preview: the deployment
// is requested while the notification waits to be retried.
func TestPullRequest_GitHubOutageDoesNotBlockPreview(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	b.fake.Fail(http.MethodPost, "/repos/acme/notes/issues/", http.StatusServiceUnavailable, 1000, nil)
	b.fake.Fail(http.MethodGet, "/repos/acme/notes/issues/", http.StatusServiceUnavailable, 1000, nil)
	if code := b.post(t, "pull_request_opened", "outage"); code != http.StatusAccepted {
		t.Fatalf("status %d", code)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ensured, _ := b.previews.calls()
		retrying := b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'github_notify' AND state = 'retryable'`)
		if len(ensured) == 1 && retrying == 1 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ensured, _ := b.previews.calls()
	t.Fatalf("EnsurePreview calls %q; want the preview requested and the notification retrying", ensured)
}
