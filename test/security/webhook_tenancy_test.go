package security

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/app/webhook"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
	"github.com/slipwayhq/slipway/test/summary"
)

// tenant is one team connected to GitHub: its installation, its
// repository and the application following it.
type tenant struct {
	team store.Team
	app  store.Application
	inst int64
	repo githubtest.Repo
}

// webhookTenancy is the real intake, mounted by the dashboard at
// /webhooks/github, with the GitHub jobs worked by River against the fake
// GitHub and the real preview machinery; deployments it requests are
// recorded, not run.
type webhookTenancy struct {
	t      *testing.T
	st     *store.Store
	f      *fiber.App
	fake   *githubtest.Server
	secret []byte
	n      int

	mu      sync.Mutex
	deploys []jobs.DeployArgs
}

func newWebhookTenancy(t *testing.T) (*webhookTenancy, tenant, tenant) {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	fake := githubtest.New(t)
	w := &webhookTenancy{t: t, st: st, fake: fake, secret: []byte("webhook-tenancy-" + distinctive(""))}
	a := tenant{inst: 101, repo: githubtest.Repo{ID: 1001, FullName: "alpha/app", DefaultBranch: "main"}}
	b := tenant{inst: 202, repo: githubtest.Repo{ID: 2002, FullName: "bravo/app", DefaultBranch: "main"}}
	for i, tn := range []*tenant{&a, &b} {
		owner := strings.Split(tn.repo.FullName, "/")[0]
		fake.AddInstallation(tn.inst, owner, tn.repo)
		// The same writer on both repositories: a delivery that reached
		// the wrong application would deploy its preview without approval.
		fake.SetPermission(tn.repo.FullName, "wendy", "write")
		var err error
		if tn.team, err = st.CreateTeam(ctx, "Team "+owner, owner); err != nil {
			t.Fatal(err)
		}
		u, err := st.CreateUser(ctx, owner+"@example.com", owner, "hash")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AddMember(ctx, tn.team.ID, u.ID, store.RoleOwner); err != nil {
			t.Fatal(err)
		}
		if tn.app, err = st.CreateApplication(ctx, tn.team.ID, fmt.Sprintf("app-%d", i)); err != nil {
			t.Fatal(err)
		}
		saveManifest(t, st, tn.team.ID, tn.app.ID, fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[spec.manifest]
path = "slipway.toml"
repository = { url = "https://github.com/%s.git", branch = "main" }
sync = { mode = "webhook" }
`, tn.app.Name, tn.repo.FullName))
		if _, err := st.BindGitHubInstallation(ctx, tn.team.ID, tn.inst, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.LinkGitHubRepository(ctx, tn.team.ID, tn.app.ID, tn.inst, tn.repo.ID, tn.repo.FullName); err != nil {
			t.Fatal(err)
		}
	}

	gh, err := github.New(fake.Config(), github.Options{Retry: github.RetryPolicy{BaseDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	record := func(_ context.Context, _ *store.Store, args river.JobArgs) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.deploys = append(w.deploys, args.(jobs.DeployArgs))
		return nil
	}
	workers := river.NewWorkers()
	if err := jobs.RegisterGitHub(workers, jobs.GitHubDeps{
		Store: st, GitHub: gh, PublicURL: "https://slipway.test", Logger: slog.New(slog.DiscardHandler),
		Previews: service.PreviewDeployer{Previews: &service.Previews{Store: st, Limits: service.PreviewLimits{MaxPerApplication: 5, MaxTotal: 50}}, Enqueue: record},
		Push:     &jobs.SyncWorker{Store: st},
	}); err != nil {
		t.Fatal(err)
	}
	client, err := river.NewClient(riverpgxv5.New(st.Pool()), &river.Config{
		Workers: workers, Logger: slog.New(slog.DiscardHandler),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(stop)
	})
	intake := webhook.New(webhook.Config{Store: st, Jobs: client, Secret: webhook.StaticSecret(w.secret), Logger: slog.New(slog.DiscardHandler)})
	// The dashboard mounts the intake, as serve does.
	w.f = app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: slog.New(slog.DiscardHandler), Webhook: intake})
	return w, a, b
}

// deliver posts a correctly signed delivery, waits for every job it
// caused, and returns the intake's status.
func (w *webhookTenancy) deliver(event string, payload map[string]any) int {
	w.t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		w.t.Fatal(err)
	}
	w.n++
	req := httptest.NewRequest(http.MethodPost, "/webhooks/github", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("tenancy-%d", w.n))
	req.Header.Set("X-Hub-Signature-256", webhook.SignatureHeader(w.secret, body))
	res, err := w.f.Test(req, -1)
	if err != nil {
		w.t.Fatal(err)
	}
	_ = res.Body.Close()
	w.settle()
	return res.StatusCode
}

// settle waits until River has no job left to run; a job that errored
// fails the test (every delivery here is processable).
func (w *webhookTenancy) settle() {
	w.t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); ; {
		var live, errored int
		if err := w.st.Pool().QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE state NOT IN ('completed', 'cancelled', 'discarded')),
			count(*) FILTER (WHERE cardinality(errors) > 0) FROM river_job`).Scan(&live, &errored); err != nil {
			w.t.Fatal(err)
		}
		if errored > 0 {
			rows, _ := w.st.Pool().Query(ctx, `SELECT kind || ': ' || errors::text FROM river_job WHERE cardinality(errors) > 0`)
			errs, _ := pgx.CollectRows(rows, pgx.RowTo[string])
			w.t.Fatalf("GitHub jobs errored: %v", errs)
		}
		if live == 0 {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%d GitHub jobs still live after 30 s", live)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// state is everything a delivery could have made for tn: its rows, the
// deployments queued for its team, and GitHub's calls on its repository.
func (w *webhookTenancy) state(tn tenant) map[string]string {
	w.t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for what, sql := range map[string]string{
		"deployments":           `SELECT count(*)::text FROM deployments WHERE team_id = $1`,
		"live previews":         `SELECT count(*)::text FROM environments WHERE team_id = $1 AND kind = 'preview' AND deleting_at IS NULL`,
		"events":                `SELECT count(*)::text FROM events WHERE team_id = $1`,
		"pull requests":         `SELECT coalesce(string_agg(number || ' ' || head_sha || ' ' || state || ' ' || approval, ','), '') FROM github_pull_requests WHERE team_id = $1`,
		"repository links":      `SELECT coalesce(string_agg(installation_id || ' ' || repository_id, ','), '') FROM github_repository_links WHERE team_id = $1`,
		"sync checks requested": `SELECT coalesce(string_agg(next_check_at::text, ','), '') FROM application_repository_state WHERE team_id = $1`,
	} {
		var v string
		if err := w.st.Pool().QueryRow(ctx, sql, tn.team.ID).Scan(&v); err != nil {
			w.t.Fatalf("%s: %v", what, err)
		}
		out[what] = v
	}
	w.mu.Lock()
	queued := 0
	for _, d := range w.deploys {
		if d.TeamID == tn.team.ID {
			queued++
		}
	}
	w.mu.Unlock()
	out["deploy jobs"] = fmt.Sprint(queued)
	calls := 0
	for _, c := range w.fake.Calls() {
		if strings.HasPrefix(c.Path, "/repos/"+tn.repo.FullName+"/") {
			calls++
		}
	}
	out["GitHub calls on "+tn.repo.FullName] = fmt.Sprint(calls)
	return out
}

// changed lists what differs between two states.
func changed(before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if before[k] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, before[k], v))
		}
	}
	return out
}

func push(inst int64, repoID int64, fullName, branch string) map[string]any {
	return map[string]any{
		"ref": "refs/heads/" + branch, "after": strings.Repeat("a", 40),
		"repository":   map[string]any{"id": repoID, "full_name": fullName, "clone_url": "https://github.com/" + fullName + ".git"},
		"installation": map[string]any{"id": inst}, "sender": map[string]any{"login": "wendy"},
	}
}

func pullRequest(action string, inst int64, repoID int64, fullName string, number int, headRepoID int64, sha string) map[string]any {
	return map[string]any{
		"action": action, "number": number,
		"pull_request": map[string]any{
			"number": number, "user": map[string]any{"login": "wendy"},
			"head": map[string]any{"ref": "feature", "sha": sha, "repo": map[string]any{"id": headRepoID}},
			"base": map[string]any{"ref": "main"},
		},
		"repository":   map[string]any{"id": repoID, "full_name": fullName},
		"installation": map[string]any{"id": inst}, "sender": map[string]any{"login": "wendy"},
	}
}

// TestTenancy_Webhook sends correctly signed GitHub deliveries that mix
// one team's installation with another team's repository (both ways),
// claim another repository's id or name, come from a fork of the other
// team's repository, or remove the other team's repository, through the
// dashboard's /webhooks/github and the real GitHub jobs. None may queue a
// deployment, create or delete a preview, record an event, request a
// sync, unlink, or make any GitHub call on the other team's repository.
// Legitimate deliveries for each team, before and between, must change
// that team's state, so the comparison is shown to see a change.
func TestTenancy_Webhook(t *testing.T) {
	t.Parallel()
	w, a, b := newWebhookTenancy(t)
	sha := func(c string) string { return strings.Repeat(c, 40) }

	// Controls: a writer's pull request on each team's own repository
	// deploys that team's preview and comments on its repository.
	for _, tn := range []tenant{b, a} {
		before := w.state(tn)
		if code := w.deliver("pull_request", pullRequest("opened", tn.inst, tn.repo.ID, tn.repo.FullName, 7, tn.repo.ID, sha("1"))); code != http.StatusAccepted {
			t.Fatalf("%s's own pull request: status %d", tn.team.Name, code)
		}
		after := w.state(tn)
		for _, k := range []string{"deployments", "live previews", "events", "pull requests", "deploy jobs", "GitHub calls on " + tn.repo.FullName} {
			if before[k] == after[k] {
				t.Fatalf("control: %s's own pull request did not change %s (%q); the comparison below could not see a leak", tn.team.Name, k, after[k])
			}
		}
		before = after
		if code := w.deliver("push", push(tn.inst, tn.repo.ID, tn.repo.FullName, "main")); code != http.StatusAccepted {
			t.Fatalf("%s's own push: status %d", tn.team.Name, code)
		}
		if after := w.state(tn); before["sync checks requested"] == after["sync checks requested"] || before["events"] == after["events"] {
			t.Fatalf("control: %s's own push requested no sync check (%v)", tn.team.Name, changed(before, after))
		}
	}

	fork := int64(3003) // a fork of alpha/app, owned by neither team
	cases := []struct {
		name    string
		victim  tenant
		event   string
		payload map[string]any
	}{
		{"push: B's installation, A's repository", a, "push", push(b.inst, a.repo.ID, a.repo.FullName, "main")},
		{"push: A's installation, B's repository", b, "push", push(a.inst, b.repo.ID, b.repo.FullName, "main")},
		{"push: B's installation, A's repository id, B's name", a, "push", push(b.inst, a.repo.ID, b.repo.FullName, "main")},
		{"push: B's installation, B's repository id, A's name", a, "push", push(b.inst, b.repo.ID, a.repo.FullName, "main")},
		{"pull_request: B's installation, A's repository", a, "pull_request", pullRequest("opened", b.inst, a.repo.ID, a.repo.FullName, 8, a.repo.ID, sha("2"))},
		{"pull_request: A's installation, B's repository", b, "pull_request", pullRequest("opened", a.inst, b.repo.ID, b.repo.FullName, 8, b.repo.ID, sha("2"))},
		{"pull_request: fork of A's repository into it, under B's installation", a, "pull_request", pullRequest("opened", b.inst, a.repo.ID, a.repo.FullName, 9, fork, sha("3"))},
		{"pull_request: from A's repository into B's, under B's installation", a, "pull_request", pullRequest("opened", b.inst, b.repo.ID, b.repo.FullName, 10, a.repo.ID, sha("4"))},
		{"pull_request: A's open #7 synchronized under B's installation", a, "pull_request", pullRequest("synchronize", b.inst, a.repo.ID, a.repo.FullName, 7, a.repo.ID, sha("5"))},
		{"pull_request: A's open #7 closed under B's installation", a, "pull_request", pullRequest("closed", b.inst, a.repo.ID, a.repo.FullName, 7, a.repo.ID, sha("1"))},
		{"pull_request: B's open #7 closed under A's installation", b, "pull_request", pullRequest("closed", a.inst, b.repo.ID, b.repo.FullName, 7, b.repo.ID, sha("1"))},
		{"installation_repositories: B's installation removes A's repository", a, "installation_repositories", map[string]any{
			"action": "removed", "installation": map[string]any{"id": b.inst, "account": map[string]any{"login": "bravo", "type": "Organization"}},
			"repositories_removed": []map[string]any{{"id": a.repo.ID, "full_name": a.repo.FullName}},
		}},
	}
	for _, tc := range cases {
		before := w.state(tc.victim)
		code := w.deliver(tc.event, tc.payload)
		if code != http.StatusAccepted {
			t.Errorf("%s: status %d, want 202 (acknowledged, then acted on nothing of the other team)", tc.name, code)
		}
		if diff := changed(before, w.state(tc.victim)); len(diff) > 0 {
			t.Errorf("%s changed %s's objects: %v", tc.name, tc.victim.team.Name, diff)
		}
	}
	summary.Line(t, "webhook tenancy: %d signed cross-team deliveries, 0 acted on the other team", len(cases))
}
