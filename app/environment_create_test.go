package app_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// TestEnvironments_CreateAndRename: an owner creates an environment and
// renames it from the Environments tab; a declared environment's rename
// form is disabled with the reason, and refusals show their code.
func TestEnvironments_CreateAndRename(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupJobs(t)
	owner, br, a := b.ownerWithApp(t, shopManifest("1")+"\n[spec.environments.production]\n")
	tab := "/applications/" + a.ID + "/environments"
	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	if testid(r, "environment-create-form").Length() != 1 {
		t.Fatalf("no create form: %s", truncate(r.body))
	}
	if testid(r, "environment-create-branch").Length() != 0 {
		t.Fatal("the create form offers a branch for an application without a manifest repository")
	}
	rename := r.doc.Find(`[data-testid="environment-manage"][data-environment="production"] [data-testid="environment-rename"]`)
	if rename.Length() != 1 || !rename.Is("[disabled]") {
		t.Fatalf("production's rename button missing or enabled: %s", truncate(r.body))
	}
	if got := testid(r, "environment-rename-locked").Text(); !strings.Contains(got, "environment_declared") {
		t.Errorf("locked rename says %q", got)
	}

	wantStatus(t, br.post(tab, url.Values{"name": {"qa"}}), http.StatusSeeOther)
	qa, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "qa")
	if err != nil {
		t.Fatalf("qa after the create form: %v", err)
	}
	r = br.post(tab, url.Values{"name": {"production"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := testid(r, "environment-create-error").Text(); !strings.Contains(got, "(environment_declared)") {
		t.Errorf("create of a declared name: error %q", got)
	}
	r = br.post(tab, url.Values{"name": {"edge"}, "branch": {"edge"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := testid(r, "environment-create-error").Text(); !strings.Contains(got, "branch: ") || !strings.Contains(got, "(manifest_repository_required)") {
		t.Errorf("create with a branch but no repository: error %q", got)
	}
	r = br.post(tab+"/qa/rename", url.Values{"name": {"production"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := testid(r, "environment-rename-error").Text(); !strings.Contains(got, "(environment_declared)") {
		t.Errorf("rename to a declared name: error %q", got)
	}

	r = br.htmx(tab+"/qa/rename", url.Values{"name": {"testing"}})
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(testid(r, "environments-notice").Text(), "qa renamed to testing") {
		t.Fatalf("rename answer: %s", truncate(r.body))
	}
	env, err := b.store.GetEnvironment(ctx, owner.team.ID, qa.ID)
	if err != nil || env.Name != "testing" {
		t.Fatalf("qa after the rename form: %+v (%v)", env, err)
	}
	wantStatus(t, br.post(tab+"/testing/rename", url.Values{"name": {"other"}, "_csrf": {""}}), http.StatusForbidden)
}

// TestEnvironments_CreateWithBranch: for a repository-backed application
// the create form offers the branch, defaulting to spec.manifest's; the
// environment follows the branch named, and an invalid one is refused
// under the form with its field and code, as env create refuses it.
func TestEnvironments_CreateWithBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupJobs(t)
	owner, br, a := b.ownerWithApp(t, repositoryBacked(""))
	tab := "/applications/" + a.ID + "/environments"
	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	field := testid(r, "environment-create-branch")
	if field.Length() != 1 || field.Closest(`[data-testid="environment-create-form"]`).Length() != 1 {
		t.Fatalf("no branch field in the create form: %s", truncate(r.body))
	}
	if ph, _ := field.Attr("placeholder"); ph != "main" {
		t.Errorf("branch placeholder %q, want spec.manifest's main", ph)
	}

	r = br.post(tab, url.Values{"name": {"qa"}, "branch": {"bad..name"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := testid(r, "environment-create-error").Text(); got != "branch: branch bad..name is not a valid git branch name (branch_invalid)" {
		t.Errorf("invalid branch: error %q", got)
	}
	if _, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "qa"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("qa after the refused create: %v, want not found", err)
	}

	r = br.htmx(tab, url.Values{"name": {"qa"}, "branch": {" feature/login "}})
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(testid(r, "environments-notice").Text(), "qa created") {
		t.Fatalf("create answer: %s", truncate(r.body))
	}
	qa, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "qa")
	if err != nil || qa.Branch != "feature/login" {
		t.Fatalf("qa follows %q (%v), want feature/login", qa.Branch, err)
	}
	if src := r.doc.Find(`[data-testid="environment-row"][data-environment="qa"] [data-testid="environment-source"]`).Text(); !strings.Contains(src, "feature/login") {
		t.Errorf("qa's row says its source is %q", strings.TrimSpace(src))
	}

	wantStatus(t, br.post(tab, url.Values{"name": {"edge"}}), http.StatusSeeOther)
	if edge, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "edge"); err != nil || edge.Branch != "" {
		t.Fatalf("edge without a branch follows %q (%v), want spec.manifest's (\"\")", edge.Branch, err)
	}
}

// TestEnvironments_CreateWithItsOwnHost: when a route's hostname is a
// variable, the create form asks the new environment's value, saved as its
// variable in one new revision (the TOML kept), so it does not render
// production's hostname; left empty, no revision is saved.
func TestEnvironments_CreateWithItsOwnHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupJobs(t)
	owner, br, a := b.ownerWithApp(t, routedByVariable)
	tab := "/applications/" + a.ID + "/environments"
	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	field := r.doc.Find(`[data-testid="environment-create-variable"][data-variable="domain"]`)
	if field.Length() != 1 || field.AttrOr("name", "") != "var.domain" {
		t.Fatalf("the create form asks no domain: %s", truncate(testid(r, "environment-create").Text()))
	}
	before, err := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}

	r = br.htmx(tab, url.Values{"name": {"qa"}, "var.domain": {"qa.shop.example"}})
	wantStatus(t, r, http.StatusOK)
	if got := testid(r, "environments-notice").Text(); !strings.Contains(got, "Environment qa created with its own domain") {
		t.Errorf("notice %q", got)
	}
	rev, err := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Revision != before.Revision+1 || rev.SourceFormat != "toml" || !strings.Contains(rev.Source, "# Values that differ between environments") {
		t.Fatalf("revision %d (%s), want %d in TOML with its comments:\n%s", rev.Revision, rev.SourceFormat, before.Revision+1, rev.Source)
	}
	saved, err := manifest.Decode(rev.Manifest, "json")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := saved.Spec.Environments["qa"].Variables["domain"]; !ok || v.Interface() != "qa.shop.example" {
		t.Fatalf("qa's variables %v, want domain = qa.shop.example", saved.Spec.Environments["qa"].Variables)
	}
	if v := saved.Spec.Variables["domain"]; v.Interface() != "shop.example.com" {
		t.Errorf("the default domain became %v", v.Interface())
	}

	// Left empty: the environment is created, the manifest is not touched.
	wantStatus(t, br.post(tab, url.Values{"name": {"qa2"}, "var.domain": {" "}}), http.StatusSeeOther)
	if _, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "qa2"); err != nil {
		t.Fatal(err)
	}
	if after, _ := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID); after.Revision != rev.Revision {
		t.Errorf("an empty value saved revision %d", after.Revision)
	}
}

// routedByVariable routes to web by the domain variable, as the starter
// manifest does.
const routedByVariable = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "shop"

# Values that differ between environments.
[spec.variables]
domain = "shop.example.com"

[[spec.services]]
name = "web"

[spec.services.source]
type = "image"
image = "registry.example/shop:1"

[[spec.routes]]
hostname = "${{ vars.domain }}"
service = "web"
port = 8080
`
