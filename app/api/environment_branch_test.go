package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

func TestEnvironmentBranch_SetAndOneOffDeploy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDeploy(t)
	want(t, b.apply(t, twoEnvs, ""), http.StatusCreated, "")
	commit := strings.Repeat("ab", 20)
	// Without a manifest repository there is no branch to follow.
	r := b.do(t, b.owner, http.MethodPut, "/api/v1/applications/notes/environments/staging/branch", "application/json", []byte(`{"branch":"main"}`))
	want(t, r, http.StatusUnprocessableEntity, "manifest_repository_required")
	want(t, b.apply(t, twoEnvs+`
[spec.manifest]
path = "slipway.toml"
repository = { url = "https://example.com/notes.git", branch = "main" }
`, ""), http.StatusOK, "")

	r = b.do(t, b.owner, http.MethodPut, "/api/v1/applications/notes/environments/staging/branch", "application/json",
		[]byte(`{"branch":"release/1","commit":"`+strings.ToUpper(commit)+`"}`))
	want(t, r, http.StatusOK, "")
	if r.body["branch"] != "release/1" || r.body["commit"] != commit {
		t.Fatalf("branch = %s", r.raw)
	}
	r = b.do(t, b.owner, http.MethodPut, "/api/v1/applications/notes/environments/staging/branch", "application/json", []byte(`{"branch":"bad..name"}`))
	want(t, r, http.StatusUnprocessableEntity, "branch_invalid")
	r = b.do(t, b.owner, http.MethodPut, "/api/v1/applications/notes/environments/staging/branch", "application/json", []byte(`{"branch":"main","commit":"abc"}`))
	want(t, r, http.StatusUnprocessableEntity, "commit_invalid")
	r = b.do(t, b.viewer, http.MethodPut, "/api/v1/applications/notes/environments/staging/branch", "application/json", []byte(`{"branch":"main"}`))
	want(t, r, http.StatusForbidden, "permission_denied")

	// A one-off branch is recorded on the deployment, not the environment.
	r = b.do(t, b.owner, http.MethodPost, "/api/v1/applications/notes/environments/staging/deploy", "application/json", []byte(`{"branch":"hotfix"}`))
	want(t, r, http.StatusAccepted, "")
	id, _ := r.body["id"].(string)
	ref, err := b.st.GetDeploymentRef(ctx, b.team.ID, id)
	if err != nil || ref.Branch != "hotfix" || ref.Commit != "" {
		t.Fatalf("one-off ref %+v (%v), want branch hotfix", ref, err)
	}
	r = b.do(t, b.owner, http.MethodPost, "/api/v1/applications/notes/environments/staging/deploy", "application/json", []byte(`{"branch":"a","commit":"`+commit+`"}`))
	want(t, r, http.StatusUnprocessableEntity, "ref_conflict")
	if n := len(b.jobs.queued()); n != 1 {
		t.Fatalf("%d deploy jobs queued, want the one-off only", n)
	}
}

func TestRepository_ResetAndStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDeploy(t)
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")
	r := b.do(t, b.owner, http.MethodPost, "/api/v1/applications/notes/repository/reset", "", nil)
	want(t, r, http.StatusUnprocessableEntity, "repository_never_read")
	app, err := b.st.GetApplicationByName(ctx, b.team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	r = b.do(t, b.owner, http.MethodGet, "/api/v1/applications/"+app.ID, "", nil)
	want(t, r, http.StatusOK, "")
	if _, ok := r.body["repository"]; ok {
		t.Fatalf("an application never read from a repository shows repository state: %s", r.raw)
	}
	read := json.RawMessage(`{"api_version":"slipway.dev/v1alpha1","kind":"Application","metadata":{"name":"notes"}}`)
	if err := b.st.RecordLastRead(ctx, b.team.ID, app.ID, read, strings.Repeat("c", 40)); err != nil {
		t.Fatal(err)
	}
	r = b.do(t, b.owner, http.MethodPost, "/api/v1/applications/notes/repository/reset", "", nil)
	want(t, r, http.StatusOK, "")
	rev, err := b.st.GetManifestRevision(ctx, b.team.ID, app.ID, int64(r.body["revision"].(float64)))
	if err != nil || rev.Revision != 2 || strings.Contains(string(rev.Manifest), "spec") {
		t.Fatalf("reset revision %+v (%v), want revision 2 holding the last-read manifest", rev, err)
	}
	r = b.do(t, b.owner, http.MethodGet, "/api/v1/applications/"+app.ID, "", nil)
	repo, _ := r.body["repository"].(map[string]any)
	if repo["last_read_commit"] != strings.Repeat("c", 40) {
		t.Fatalf("application = %s, want repository.last_read_commit", r.raw)
	}
}

// PUT .../sync turns sync on only where a manifest repository exists, and
// needs apps:write.
func TestEnvironmentSync_Set(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoEnvs, ""), http.StatusCreated, "")
	path := "/api/v1/applications/notes/environments/staging/sync"
	r := b.do(t, b.owner, http.MethodPut, path, "application/json", []byte(`{"sync":true}`))
	want(t, r, http.StatusUnprocessableEntity, "manifest_repository_required")
	r = b.do(t, b.owner, http.MethodPut, path, "application/json", []byte(`{"sync":false}`))
	want(t, r, http.StatusOK, "")
	if r.body["environment"] != "staging" || r.body["sync"] != false {
		t.Fatalf("sync off = %s", r.raw)
	}
	r = b.do(t, b.viewer, http.MethodPut, path, "application/json", []byte(`{"sync":false}`))
	want(t, r, http.StatusForbidden, "")
	// Turning sync on deploys what moved at the next listing: it needs
	// apps:deploy besides apps:write; turning it off does not.
	_, writer, err := service.CreateToken(context.Background(), b.st, service.Actor{TeamID: b.team.ID, UserID: b.ownerID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "writer", Scopes: []string{string(auth.AppsRead), string(auth.AppsWrite)}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r = b.do(t, writer, http.MethodPut, path, "application/json", []byte(`{"sync":true}`))
	want(t, r, http.StatusForbidden, "permission_denied")
	if details, _ := r.body["details"].(map[string]any); details["permission"] != string(auth.AppsDeploy) {
		t.Fatalf("refusal names %v, want %s: %s", details["permission"], auth.AppsDeploy, r.raw)
	}
	r = b.do(t, writer, http.MethodPut, path, "application/json", []byte(`{"sync":false}`))
	want(t, r, http.StatusOK, "")
	r = b.do(t, b.owner, http.MethodPut, "/api/v1/applications/notes/environments/nope/sync", "application/json", []byte(`{"sync":false}`))
	want(t, r, http.StatusNotFound, "environment_not_found")
}
