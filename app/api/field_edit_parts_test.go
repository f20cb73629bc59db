package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestFieldEdit_RoutesAndJobs(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	want(t, b.edit(t, http.MethodPut, "/routes/site", `{"hostname":"${{ env.slug }}.shop.example.com","service":"web","port":8080}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/routes/site", `{"name":"other","hostname":"x.example.com"}`), http.StatusBadRequest, "name_mismatch")
	// Replacing keeps one route of that name.
	want(t, b.edit(t, http.MethodPut, "/routes/site", `{"hostname":"${{ env.slug }}.shop.example.com","service":"web","port":9090,"visibility":"public"}`), http.StatusOK, "")
	// A route to a service the manifest lacks is invalid as a whole.
	r := b.edit(t, http.MethodPut, "/routes/admin", `{"hostname":"admin.example.com","service":"nope","port":80}`)
	want(t, r, http.StatusUnprocessableEntity, "manifest_validation_failed")
	m, rev := b.saved(t, "shop")
	if rev != 3 || len(m.Spec.Routes) != 1 || m.Spec.Routes[0].Port != 9090 || m.Spec.Routes[0].Visibility != "public" {
		t.Fatalf("rev %d routes %+v", rev, m.Spec.Routes)
	}

	want(t, b.edit(t, http.MethodPut, "/jobs/seed", `{"service":"db","command":["seed"]}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/jobs/migrate", `{"service":"db","command":["migrate","--all"],"timeout_seconds":60}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/jobs/bad", `{"service":"ghost"}`), http.StatusUnprocessableEntity, "manifest_validation_failed")
	// A mistyped integer is named at its path, not saved as 0.
	r = b.edit(t, http.MethodPut, "/jobs/typo", `{"service":"db","timeout_seconds":"ten"}`)
	want(t, r, http.StatusUnprocessableEntity, "manifest_validation_failed")
	if !strings.Contains(r.raw, "type_mismatch") || !strings.Contains(r.raw, "timeout_seconds") {
		t.Fatalf("mistyped timeout_seconds: %s, want type_mismatch at its path", r.raw)
	}
	want(t, b.edit(t, http.MethodDelete, "/jobs/seed", ""), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/jobs/seed", ""), http.StatusNotFound, "job_unknown")
	want(t, b.edit(t, http.MethodDelete, "/routes/site", ""), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/routes/site", ""), http.StatusNotFound, "route_unknown")
	m, rev = b.saved(t, "shop")
	if rev != 7 || len(m.Spec.Routes) != 0 || len(m.Spec.Jobs) != 1 || len(m.Spec.Jobs[0].Command) != 2 || m.Spec.Jobs[0].TimeoutSeconds.N != 60 {
		t.Fatalf("rev %d routes %+v jobs %+v", rev, m.Spec.Routes, m.Spec.Jobs)
	}
	if len(b.jobs.queued()) != 0 {
		t.Fatalf("field edits without ?deploy queued %d jobs", len(b.jobs.queued()))
	}
}

func TestFieldEdit_FilesExportsImports(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	want(t, b.edit(t, http.MethodPut, "/services/web/files", `{"target":"/etc/web.conf","content":"a=1"}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/services/web/files", `{"target":"/etc/web.conf","content":"a=2","mode":"0440"}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/services/web/files", `{"target":"relative","content":"x"}`), http.StatusUnprocessableEntity, "manifest_validation_failed")
	want(t, b.edit(t, http.MethodPut, "/services/ghost/files", `{"target":"/x","content":"x"}`), http.StatusNotFound, "service_unknown")
	m, _ := b.saved(t, "shop")
	if f := m.Spec.Services[0].Files; len(f) != 1 || f[0].Content != "a=2" || f[0].Mode != "0440" {
		t.Fatalf("files %+v", f)
	}
	want(t, b.edit(t, http.MethodDelete, "/services/web/files", ""), http.StatusBadRequest, "target_missing")
	want(t, b.edit(t, http.MethodDelete, "/services/web/files?target=/etc/other", ""), http.StatusNotFound, "file_unknown")
	want(t, b.edit(t, http.MethodDelete, "/services/web/files?target=/etc/web.conf", ""), http.StatusOK, "")

	want(t, b.edit(t, http.MethodPut, "/exports/web", `{"applications":["crm"],"previews":true}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/exports/db", `{"applications":["billing","crm"]}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/exports/web", ""), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/exports/web", ""), http.StatusNotFound, "export_unknown")

	want(t, b.edit(t, http.MethodPut, "/imports/billing/api", ""), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/imports/billing/api", `{"environment":"production"}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/imports/crm/ledger", ""), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/imports/crm/ledger", ""), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/imports/crm/ledger", ""), http.StatusNotFound, "import_unknown")
	m, _ = b.saved(t, "shop")
	if len(m.Spec.Services[0].Files) != 0 || len(m.Spec.Exports) != 1 || len(m.Spec.Exports[0].Applications) != 2 ||
		len(m.Spec.Imports) != 1 || m.Spec.Imports[0].Environment != "production" {
		t.Fatalf("files %+v exports %+v imports %+v", m.Spec.Services[0].Files, m.Spec.Exports, m.Spec.Imports)
	}
}

func TestFieldEdit_EnvironmentSettings(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	want(t, b.edit(t, http.MethodPut, "/environments/staging/visibility", `{"visibility":"private"}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/environments/production/rollback", `{"rollback":"manual"}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/environments/staging/visibility", `{"visibility":"secret"}`), http.StatusUnprocessableEntity, "manifest_validation_failed")
	want(t, b.edit(t, http.MethodPut, "/environments/nowhere/rollback", `{"rollback":"manual"}`), http.StatusNotFound, "environment_unknown")
	m, rev := b.saved(t, "shop")
	if rev != 3 || m.Spec.Environments["staging"].Visibility != "private" || m.Spec.Environments["production"].Rollback != "manual" {
		t.Fatalf("rev %d environments %+v", rev, m.Spec.Environments)
	}
	// The environment rows follow the saved blocks.
	r := b.do(t, b.owner, http.MethodGet, "/api/v1/applications/shop/environments", "", nil)
	want(t, r, http.StatusOK, "")
	// "" returns to the default by removing the setting.
	want(t, b.edit(t, http.MethodPut, "/environments/production/rollback", `{"rollback":""}`), http.StatusOK, "")
	m, _ = b.saved(t, "shop")
	if m.Spec.Environments["production"].Rollback != "" {
		t.Fatalf("rollback not removed: %+v", m.Spec.Environments["production"])
	}
}

// TestFieldEdit_EnvironmentSettingDeclaresEveryEnvironment: the first block
// a field edit adds comes with empty blocks for the other environments.
func TestFieldEdit_EnvironmentSettingDeclaresEveryEnvironment(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	undeclared := twoServices[:len(twoServices)-len("[spec.environments.staging]\n[spec.environments.production]\n")]
	want(t, b.apply(t, undeclared, ""), http.StatusCreated, "")
	want(t, b.edit(t, http.MethodPut, "/environments/production/visibility", `{"visibility":"private"}`), http.StatusOK, "")
	m, _ := b.saved(t, "shop")
	if len(m.Spec.Environments) != 1 || m.Spec.Environments["production"].Visibility != "private" {
		t.Fatalf("environments %+v", m.Spec.Environments)
	}
}

// TestFieldEdit_PartsRevisionConflict: an edit of revision 1 after another
// save of it fails with generation_conflict and saves nothing.
func TestFieldEdit_PartsRevisionConflict(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")
	want(t, b.edit(t, http.MethodPut, "/jobs/seed", `{"service":"db"}`, "If-Match", "1"), http.StatusOK, "")
	for _, e := range []struct{ method, path, body string }{
		{http.MethodPut, "/routes/site", `{"hostname":"${{ env.slug }}.shop.example.com","service":"web","port":80}`},
		{http.MethodDelete, "/jobs/migrate", ""},
		{http.MethodPut, "/services/web/files", `{"target":"/a","content":"x"}`},
		{http.MethodPut, "/exports/web", `{"applications":["crm"]}`},
		{http.MethodDelete, "/imports/a/b", ""},
		{http.MethodPut, "/environments/staging/visibility", `{"visibility":"private"}`},
		{http.MethodPut, "/environments/staging/rollback", `{"rollback":"manual"}`},
	} {
		want(t, b.edit(t, e.method, e.path, e.body, "If-Match", "1"), http.StatusConflict, "generation_conflict")
	}
	if _, rev := b.saved(t, "shop"); rev != 2 {
		t.Fatalf("conflicting edits saved: revision %d", rev)
	}
}
