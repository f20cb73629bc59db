package security

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// ServiceLogs lets the dashboard's logs pages read the services' output
// from the real Swarm, as serve wires them (cmd/slipway/runtime_logs.go).
func (o observedStatus) ServiceLogs(ctx context.Context, envID, service string, opts app.LogOptions, emit func([]app.LogLine) error) error {
	err := o.driver.ServiceLogs(ctx, swarm.EnvRef{ID: envID, ShortID: store.ShortID(envID)}, service,
		swarm.LogOptions{Follow: opts.Follow, Tail: opts.Tail, Since: opts.Since}, func(lines []swarm.LogLine) error {
			for _, l := range lines {
				if err := emit([]app.LogLine{{Time: l.Time, Task: l.Task, Node: l.Node, Stderr: l.Stderr, Text: l.Text}}); err != nil {
					return err
				}
			}
			return nil
		})
	if swarm.Code(err) == swarm.CodeServiceNotRunning {
		return fmt.Errorf("%w: %v", app.ErrServiceNotRunning, err)
	}
	return err
}

// queuedDeployment is the deployment a response names, which must have
// been queued through q; it fails the test otherwise.
func queuedDeployment(t *testing.T, q *recordingJobs, r apiResult, path ...string) string {
	t.Helper()
	var v any = r.body
	for _, key := range path {
		m, _ := v.(map[string]any)
		v = m[key]
	}
	id, _ := v.(string)
	if id == "" {
		t.Fatalf("no deployment at %v in %d %s", path, r.status, r.raw)
	}
	for _, args := range q.all() {
		if d, ok := args.(jobs.DeployArgs); ok && d.DeploymentID == id {
			return id
		}
	}
	t.Fatalf("deployment %s was not queued", id)
	return ""
}

func (r *recordingJobs) all() []river.JobArgs {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]river.JobArgs(nil), r.args...)
}

// previewRepository is a file:// repository whose branch feature holds
// the application's manifest (doc); main holds only a README, so a
// preview reads the manifest from its own branch.
func previewRepository(t *testing.T, doc string) string {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	commit := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(name); err != nil {
			t.Fatal(err)
		}
		sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}
		if _, err := wt.Commit("add "+name, &git.CommitOptions{Author: sig}); err != nil {
			t.Fatal(err)
		}
	}
	commit("README", "previews read slipway.toml from their branch\n")
	if err := wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature"), Create: true}); err != nil {
		t.Fatal(err)
	}
	commit("slipway.toml", doc)
	return "file://" + dir
}

// saveManifest stores doc as the application's current manifest, as an
// apply would once validated (file:// URLs are the operator's switch,
// which the pipeline has on here).
func saveManifest(t *testing.T, st *store.Store, teamID, appID, doc string) store.ManifestRevision {
	t.Helper()
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if errs := manifest.Validate(m, manifest.ValidateOptions{StoredSecretNames: []string{"db-password", "pv-token"}}); len(errs) > 0 {
		t.Fatalf("manifest invalid: %v", errs)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := st.CreateManifestRevision(context.Background(), teamID, appID, store.RevisionParams{Manifest: raw, Source: doc, Author: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// wantAPI fails the test unless r has status want; it returns r.
func wantAPI(t *testing.T, what string, r apiResult, want int) apiResult {
	t.Helper()
	if r.status != want {
		t.Fatalf("%s: %d %s, want %d", what, r.status, r.raw, want)
	}
	return r
}

// promoteSteps promotes staging's deployment to production through the
// API (a plan, then the promotion, deployed on the Swarm with the stored
// and generated secrets present), then narrows db-password to staging
// and promotes again through the API and the dashboard's form, both
// refused with secrets_unavailable. Every response is scanned.
func promoteSteps(t *testing.T, sc *scanner, s *site, q *recordingJobs, advance func(id string) store.Deployment,
	application store.Application, production store.Environment, source store.Deployment) store.Deployment {
	t.Helper()
	promote := "/api/v1/applications/" + application.Name + "/environments/production/promote"
	plan := wantAPI(t, "promotion plan", s.api(t, http.MethodPost, promote, `{"plan":true}`), http.StatusOK)
	sc.scan("POST "+promote+" (plan)", plan.raw)
	accepted := wantAPI(t, "promotion", s.api(t, http.MethodPost, promote, `{"deployment_id":"`+source.ID+`"}`), http.StatusAccepted)
	sc.scan("POST "+promote, accepted.raw)
	promoted := advance(queuedDeployment(t, q, accepted, "deployment", "id"))
	wantDeployState(t, promoted, store.StateSucceeded)
	if promoted.Origin != store.OriginPromotion || promoted.PromotedFrom != source.ID || promoted.EnvironmentID != production.ID {
		t.Fatalf("promotion deployed %+v, want production promoted from %s", promoted, source.ID)
	}

	access := "/api/v1/applications/" + application.Name + "/secrets/db-password/access"
	narrowed := wantAPI(t, "narrow db-password", s.api(t, http.MethodPut, access, `{"all_environments":false,"environments":["staging"]}`), http.StatusOK)
	sc.scan("PUT "+access, narrowed.raw)
	before := len(q.all())
	refused := wantAPI(t, "promotion without db-password", s.api(t, http.MethodPost, promote, `{"deployment_id":"`+source.ID+`"}`), http.StatusUnprocessableEntity)
	if refused.code() != "secrets_unavailable" {
		t.Fatalf("promotion without db-password: %s, want secrets_unavailable", refused.raw)
	}
	sc.scan("POST "+promote+" (refused)", refused.raw)
	form := "/applications/" + application.ID + "/environments/" + production.ID + "/promote"
	page := s.post(t, form, url.Values{"deployment_id": {source.ID}})
	if page.status != http.StatusUnprocessableEntity || !strings.Contains(page.body, "secrets_unavailable") {
		t.Fatalf("dashboard promotion without db-password: %d, want 422 naming secrets_unavailable:\n%.2000s", page.status, page.body)
	}
	sc.scan("POST "+form+" (refused)", page.body)
	if after := len(q.all()); after != before {
		t.Fatalf("a refused promotion queued %d jobs", after-before)
	}
	return promoted
}

// previewSteps creates the preview of branch feature through the API: its
// first deployment fails with secret_access_denied (pv-token does not
// allow previews yet); once allowed, the redeployed preview runs on the
// Swarm with the stored and its own generated secret. Every response is
// scanned; it returns the preview and its two deployments.
func previewSteps(t *testing.T, sc *scanner, s *site, q *recordingJobs, advance func(id string) store.Deployment,
	pvApp store.Application, pvStored string) (store.Environment, []store.Deployment) {
	t.Helper()
	ctx := context.Background()
	base := "/api/v1/applications/" + pvApp.Name
	set := wantAPI(t, "set pv-token", s.api(t, http.MethodPut, base+"/secrets/pv-token", `{"value":`+string(mustJSON(pvStored))+`}`), http.StatusOK)
	sc.scan("PUT "+base+"/secrets/pv-token", set.raw)

	created := wantAPI(t, "create preview", s.api(t, http.MethodPost, base+"/previews", `{"branch":"feature"}`), http.StatusCreated)
	sc.scan("POST "+base+"/previews", created.raw)
	slug, _ := created.body["slug"].(string)
	preview, err := s.st.GetPreviewBySlug(ctx, s.team.ID, pvApp.ID, slug)
	if err != nil {
		t.Fatalf("preview %q: %v", slug, err)
	}
	swarmtest.RemoveOnCleanup(t, swarm.LabelEnv+"="+preview.ID)
	denied := advance(queuedDeployment(t, q, created, "deployment", "id"))
	if denied.State != store.StateFailed || denied.ErrorCode != "secret_access_denied" {
		t.Fatalf("preview mounting a secret that does not allow previews ended %s %s: %s, want failed secret_access_denied",
			denied.State, denied.ErrorCode, denied.ErrorMessage)
	}

	allowed := wantAPI(t, "allow previews", s.api(t, http.MethodPut, base+"/secrets/pv-token/access", `{"previews":true}`), http.StatusOK)
	sc.scan("PUT "+base+"/secrets/pv-token/access", allowed.raw)
	redeploy := wantAPI(t, "redeploy preview", s.api(t, http.MethodPost, base+"/previews/"+slug+"/deploy", ""), http.StatusAccepted)
	sc.scan("POST "+base+"/previews/"+slug+"/deploy", redeploy.raw)
	deployed := advance(queuedDeployment(t, q, redeploy, "id"))
	wantDeployState(t, deployed, store.StateSucceeded)
	if deployed.EnvironmentID != preview.ID {
		t.Fatalf("preview redeploy deployed environment %s, want %s", deployed.EnvironmentID, preview.ID)
	}
	return preview, []store.Deployment{denied, deployed}
}
