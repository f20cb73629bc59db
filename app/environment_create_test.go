package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
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
