package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

const twoServices = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "shop"

[[spec.services]]
name = "web"
depends_on = ["db"]
[spec.services.source]
type = "image"
image = "example.com/web:1"

[[spec.services]]
name = "db"
[spec.services.source]
type = "image"
image = "example.com/db:1"

[[spec.jobs]]
name = "migrate"
service = "db"
command = ["migrate"]

[[spec.exports]]
service = "db"
applications = ["billing"]

[spec.environments.staging]
[spec.environments.production]
`

// saved returns the application's current manifest and revision.
func (b *deployBundle) saved(t *testing.T, app string) (*manifest.Manifest, int64) {
	t.Helper()
	r := b.do(t, b.owner, http.MethodGet, "/api/v1/applications/"+app+"/manifest", "", nil)
	want(t, r, http.StatusOK, "")
	raw, _ := json.Marshal(r.body["manifest"])
	m, err := manifest.Decode(raw, "json")
	if err != nil {
		t.Fatal(err)
	}
	return m, int64(r.body["revision"].(float64))
}

func (b *deployBundle) edit(t *testing.T, method, path, body string, headers ...string) reply {
	t.Helper()
	var raw []byte
	if body != "" {
		raw = []byte(body)
	}
	return b.do(t, b.owner, method, "/api/v1/applications/shop"+path, "application/json", raw, headers...)
}

func TestFieldEdit_Variables(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	r := b.edit(t, http.MethodPut, "/variables/greeting", `{"value":"hello"}`)
	want(t, r, http.StatusOK, "")
	if r.body["revision"] != 2.0 || r.body["unchanged"] != false || len(r.body["deployments"].([]any)) != 0 {
		t.Fatalf("set = %s", r.raw)
	}
	r = b.edit(t, http.MethodPut, "/variables/replicas?env=staging", `{"value":3}`)
	want(t, r, http.StatusOK, "")
	m, rev := b.saved(t, "shop")
	if rev != 3 || m.Spec.Variables["greeting"].Interface() != "hello" ||
		m.Spec.Environments["staging"].Variables["replicas"].Interface() != int64(3) {
		t.Fatalf("saved rev %d vars %v staging %v", rev, m.Spec.Variables, m.Spec.Environments["staging"].Variables)
	}
	// Setting the same value again saves nothing.
	r = b.edit(t, http.MethodPut, "/variables/greeting", `{"value":"hello"}`)
	want(t, r, http.StatusOK, "")
	if r.body["unchanged"] != true || r.body["revision"] != 3.0 {
		t.Fatalf("same value = %s", r.raw)
	}
	want(t, b.edit(t, http.MethodPut, "/variables/x?env=nowhere", `{"value":"1"}`), http.StatusNotFound, "environment_unknown")
	want(t, b.edit(t, http.MethodPut, "/variables/x", `{"value":[1]}`), http.StatusUnprocessableEntity, "manifest_validation_failed")

	r = b.edit(t, http.MethodDelete, "/variables/replicas?env=staging", "")
	want(t, r, http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/variables/replicas?env=staging", ""), http.StatusNotFound, "variable_unknown")
	m, rev = b.saved(t, "shop")
	if rev != 4 || len(m.Spec.Environments["staging"].Variables) != 0 || m.Spec.Variables["greeting"].Interface() != "hello" {
		t.Fatalf("after unset rev %d %+v", rev, m.Spec)
	}
	// ?deploy=true deploys every environment that builds.
	r = b.edit(t, http.MethodPut, "/variables/greeting?deploy=true", `{"value":"bye"}`)
	want(t, r, http.StatusOK, "")
	if n := len(r.body["deployments"].([]any)); n != 2 || len(b.jobs.queued()) != 2 {
		t.Fatalf("deploy=true queued %d: %s", n, r.raw)
	}
}

func TestFieldEdit_Service(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	r := b.edit(t, http.MethodPatch, "/services/web", `{"replicas":3,"image":"example.com/web:2","environment":{"LOG":"debug","MODE":"x"}}`)
	want(t, r, http.StatusOK, "")
	r = b.edit(t, http.MethodPatch, "/services/web", `{"environment":{"MODE":null}}`)
	want(t, r, http.StatusOK, "")
	m, rev := b.saved(t, "shop")
	web := m.Spec.Services[0]
	if rev != 3 || web.Replicas.N != 3 || web.Source.Image != "example.com/web:2" || len(web.Environment) != 1 || web.Environment["LOG"] != "debug" {
		t.Fatalf("rev %d web %+v", rev, web)
	}
	want(t, b.edit(t, http.MethodPatch, "/services/nope", `{"replicas":1}`), http.StatusNotFound, "service_unknown")
	want(t, b.edit(t, http.MethodPatch, "/services/web", `{"replicaz":1}`), http.StatusBadRequest, "field_unknown")

	// An invalid result names the field and saves nothing.
	r = b.edit(t, http.MethodPatch, "/services/web", `{"replicas":-4}`)
	want(t, r, http.StatusUnprocessableEntity, "manifest_validation_failed")
	errs := r.body["details"].(map[string]any)["errors"].([]any)
	if errs[0].(map[string]any)["path"] != "spec.services[0].replicas" {
		t.Fatalf("errors %v", errs)
	}
	if _, after := b.saved(t, "shop"); after != rev {
		t.Fatalf("an invalid edit saved revision %d", after)
	}
}

func TestFieldEdit_RenameRepointsReferences(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	want(t, b.edit(t, http.MethodPost, "/services/db/rename", `{"name":"web"}`), http.StatusConflict, "service_name_taken")
	want(t, b.edit(t, http.MethodPost, "/services/db/rename", `{"name":"Bad_Name"}`), http.StatusUnprocessableEntity, "manifest_validation_failed")
	r := b.edit(t, http.MethodPost, "/services/db/rename", `{"name":"postgres"}`)
	want(t, r, http.StatusOK, "")
	m, rev := b.saved(t, "shop")
	if rev != 2 || m.Spec.Services[1].Name != "postgres" || m.Spec.Services[0].DependsOn[0] != "postgres" ||
		m.Spec.Jobs[0].Service != "postgres" || m.Spec.Exports[0].Service != "postgres" {
		t.Fatalf("after rename %+v", m.Spec)
	}
}

func TestFieldEdit_RevisionConflict(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	// Two editors both loaded revision 1: the first save wins, the second
	// is refused instead of overwriting it.
	want(t, b.edit(t, http.MethodPatch, "/services/web", `{"replicas":2}`, "If-Match", "1"), http.StatusOK, "")
	r := b.edit(t, http.MethodPut, "/variables/a", `{"value":"x"}`, "If-Match", "1")
	want(t, r, http.StatusConflict, "generation_conflict")
	want(t, b.edit(t, http.MethodPut, "/variables/a", `{"value":"x"}`, "If-Match", `"2"`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/variables/a", `{"value":"y"}`, "If-Match", "two"), http.StatusBadRequest, "if_match_invalid")
	m, rev := b.saved(t, "shop")
	if rev != 3 || m.Spec.Services[0].Replicas.N != 2 || m.Spec.Variables["a"].Interface() != "x" {
		t.Fatalf("rev %d %+v", rev, m.Spec)
	}

}
