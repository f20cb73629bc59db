package app_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// repositoryBacked is shopManifest read from a repository; extra is
// appended (an environment block, say).
func repositoryBacked(extra string) string {
	return shopManifest("1") + `
[spec.manifest]
path = "slipway.toml"
repository = { url = "https://git.example.com/shop.git", branch = "main" }
` + extra
}

// TestEnvironments_BranchAndDelete: an owner edits an undeclared
// environment's branch and sync and deletes an environment after typing
// its name; refusals show their field and code; a viewer gets no controls
// and 403; a post without the CSRF token is refused.
func TestEnvironments_BranchAndDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupJobs(t)
	owner, br, a := b.ownerWithApp(t, repositoryBacked(""))
	staging, err := b.store.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{ApplicationID: a.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "staging", Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	tab := "/applications/" + a.ID + "/environments"
	base := tab + "/"
	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	if n := testid(r, "environment-branch-form").Length(); n != 2 {
		t.Fatalf("%d branch forms, want one per environment", n)
	}
	if del := r.doc.Find(`[data-testid="environment-manage"][data-environment="staging"] [data-testid="environment-delete"]`); del.Length() != 1 || del.Is("[disabled]") {
		t.Fatalf("staging's delete button missing or disabled: %s", truncate(r.body))
	}
	if !strings.Contains(testid(r, "environment-manage").Text(), "Named volumes are kept") {
		t.Error("the delete form does not say named volumes are kept")
	}

	wantStatus(t, br.post(base+"staging/branch", url.Values{"branch": {"release"}, "sync": {"on"}}), http.StatusSeeOther)
	env, err := b.store.GetEnvironment(ctx, owner.team.ID, staging.ID)
	if err != nil || env.Branch != "release" || !env.Sync {
		t.Fatalf("staging after the branch form: branch %q sync %v (%v)", env.Branch, env.Sync, err)
	}
	r = br.htmx(base+"staging/branch", url.Values{"branch": {"release"}, "sync": {"off"}})
	wantStatus(t, r, http.StatusOK)
	if env, _ = b.store.GetEnvironment(ctx, owner.team.ID, staging.ID); env.Sync || testid(r, "environments-notice").Length() != 1 {
		t.Fatalf("sync off: sync %v, answer %s", env.Sync, truncate(r.body))
	}

	refusals := []struct {
		path string
		form url.Values
		id   string
		want string
	}{
		{"staging/branch", url.Values{"branch": {"bad..name"}}, "environment-branch-error", "branch: branch bad..name is not a valid git branch name (branch_invalid)"},
		{"staging/delete", url.Values{"confirm": {"stagin"}}, "environment-delete-error", "(confirmation_mismatch)"},
	}
	for _, tc := range refusals {
		r := br.post(base+tc.path, tc.form)
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if got := testid(r, tc.id).Text(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: error %q, want %q", tc.path, got, tc.want)
		}
	}

	wantStatus(t, br.post(base+"staging/delete", url.Values{"confirm": {"staging"}, "_csrf": {""}}), http.StatusForbidden)
	if _, err := b.store.GetEnvironment(ctx, owner.team.ID, staging.ID); err != nil {
		t.Fatalf("staging is gone after a post without CSRF token: %v", err)
	}

	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	vb := b.sessionBrowser(t, viewer)
	r = vb.get(tab)
	wantStatus(t, r, http.StatusOK)
	if n := testid(r, "environment-manage").Length(); n != 0 {
		t.Fatalf("a viewer sees %d environment controls", n)
	}
	wantStatus(t, vb.post(base+"staging/delete", url.Values{"confirm": {"staging"}}), http.StatusForbidden)
	wantStatus(t, vb.post(base+"staging/branch", url.Values{"branch": {"main"}}), http.StatusForbidden)

	wantStatus(t, br.post(base+"staging/delete", url.Values{"confirm": {"staging"}}), http.StatusSeeOther)
	if _, err := b.store.GetEnvironment(ctx, owner.team.ID, staging.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("staging after its deletion: %v, want not found", err)
	}
	if r = br.get(tab); r.doc.Find(`[data-testid="environment-row"][data-environment="staging"]`).Length() != 0 {
		t.Fatal("staging is still listed")
	}
}

// TestEnvironments_DeclaredSourceReadOnly: an environment whose block sets
// its source shows branch and sync read-only and its delete disabled with
// the reason; the server refuses both anyway with environment_declared.
func TestEnvironments_DeclaredSourceReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupJobs(t)
	owner, br, a := b.ownerWithApp(t, repositoryBacked(`
[spec.environments.production]
branch = "main"
`))
	base := "/applications/" + a.ID + "/environments/"
	r := br.get("/applications/" + a.ID + "/environments")
	wantStatus(t, r, http.StatusOK)
	if testid(r, "environment-branch-form").Length() != 0 || !strings.Contains(testid(r, "environment-branch-locked").Text(), "environment_declared") {
		t.Fatalf("declared production's branch is editable: %s", truncate(r.body))
	}
	if !testid(r, "environment-delete").Is("[disabled]") || !strings.Contains(testid(r, "environment-delete-locked").Text(), "environment_declared") {
		t.Fatalf("declared production's delete is not disabled with the reason: %s", truncate(r.body))
	}
	for path, form := range map[string]url.Values{
		"production/delete": {"confirm": {"production"}},
		"production/branch": {"branch": {"release"}},
	} {
		r := br.post(base+path, form)
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if got := r.doc.Find(".field-error").Text(); !strings.Contains(got, "environment: ") || !strings.Contains(got, "(environment_declared)") {
			t.Errorf("%s: errors %q, want environment_declared", path, r.doc.Find(".field-error").Text())
		}
	}
	env, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "production")
	if err != nil || env.Branch != "main" {
		t.Fatalf("production after the refused edits: branch %q (%v)", env.Branch, err)
	}
}

// TestEnvironments_BranchAndSyncSaveTogether: the branch form saves branch
// and sync in one transaction. Posted for an application without a
// manifest repository (a form sent before the repository was
// disconnected), sync on is refused and the branch, which alone would be
// accepted, is not kept; the refusal shows with its field and code.
func TestEnvironments_BranchAndSyncSaveTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupJobs(t)
	owner, br, a := b.ownerWithApp(t, shopManifest("1"))
	qa, err := b.store.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{ApplicationID: a.ID, Kind: store.KindEnvironment, Name: "qa", Slug: "qa"})
	if err != nil {
		t.Fatal(err)
	}
	r := br.post("/applications/"+a.ID+"/environments/qa/branch", url.Values{"branch": {"release"}, "sync": {"on"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := testid(r, "environment-branch-error").Text(); !strings.Contains(got, "branch: ") || !strings.Contains(got, "(manifest_repository_required)") {
		t.Errorf("refusal shows %q, want the branch's manifest_repository_required", got)
	}
	if env, err := b.store.GetEnvironment(ctx, owner.team.ID, qa.ID); err != nil || env.Branch != "" || env.Sync {
		t.Fatalf("qa after the refused save: branch %q sync %v (%v), want both unchanged", env.Branch, env.Sync, err)
	}
}
