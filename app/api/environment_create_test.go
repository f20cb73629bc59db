package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestEnvironmentCreateAndRename(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoEnvs, ""), http.StatusCreated, "")
	const envs = "/api/v1/applications/notes/environments"

	r := b.do(t, b.owner, http.MethodPost, envs, "application/json", []byte(`{"name":"qa"}`))
	want(t, r, http.StatusCreated, "")
	if r.body["name"] != "qa" || r.body["kind"] != "environment" {
		t.Fatalf("created %s", r.raw)
	}
	r = b.do(t, b.owner, http.MethodPost, envs, "application/json", []byte(`{"name":"qa"}`))
	want(t, r, http.StatusConflict, "environment_name_taken")
	r = b.do(t, b.owner, http.MethodPost, envs, "application/json", []byte(`{"name":"staging"}`))
	want(t, r, http.StatusUnprocessableEntity, "environment_declared")
	// A branch must be a git branch name, and needs a manifest repository.
	r = b.do(t, b.owner, http.MethodPost, envs, "application/json", []byte(`{"name":"edge","branch":"bad..name"}`))
	want(t, r, http.StatusUnprocessableEntity, "branch_invalid")
	r = b.do(t, b.owner, http.MethodPost, envs, "application/json", []byte(`{"name":"edge","branch":"edge"}`))
	want(t, r, http.StatusUnprocessableEntity, "manifest_repository_required")
	r = b.do(t, b.viewer, http.MethodPost, envs, "application/json", []byte(`{"name":"other"}`))
	want(t, r, http.StatusForbidden, "permission_denied")

	r = b.do(t, b.owner, http.MethodPost, envs+"/staging/rename", "application/json", []byte(`{"name":"stage"}`))
	want(t, r, http.StatusUnprocessableEntity, "environment_declared")
	r = b.do(t, b.owner, http.MethodPost, envs+"/qa/rename", "application/json", []byte(`{"name":"production"}`))
	want(t, r, http.StatusUnprocessableEntity, "environment_declared")
	r = b.do(t, b.owner, http.MethodPost, envs+"/nowhere/rename", "application/json", []byte(`{"name":"other"}`))
	want(t, r, http.StatusNotFound, "environment_not_found")
	r = b.do(t, b.owner, http.MethodPost, envs+"/qa/rename", "application/json", []byte(`{"name":"testing"}`))
	want(t, r, http.StatusOK, "")
	env, _ := r.body["environment"].(map[string]any)
	if r.body["old_name"] != "qa" || env["name"] != "testing" {
		t.Fatalf("renamed %s", r.raw)
	}
	r = b.do(t, b.owner, http.MethodGet, envs, "", nil)
	want(t, r, http.StatusOK, "")
	names := map[string]bool{}
	list, _ := r.body["environments"].([]any)
	for _, e := range list {
		names[e.(map[string]any)["name"].(string)] = true
	}
	if !names["testing"] || names["qa"] {
		t.Fatalf("environments after rename: %s", r.raw)
	}
}

// TestEnvironmentCreate_OwnHostname: a route with a literal hostname
// would serve the same name in every environment; the created one gets
// its own (the one asked for) and says so, production keeps the literal.
func TestEnvironmentCreate_OwnHostname(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	doc := "# Notes.\napi_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \"notes\"\n\n[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"image\"\nimage = \"example.com/notes:1\"\n\n[[spec.routes]]\nhostname = \"notes-own.example.com\"\nservice = \"web\"\nport = 8080\n"
	want(t, b.apply(t, doc, ""), http.StatusCreated, "")
	const envs = "/api/v1/applications/notes/environments"
	r := b.do(t, b.owner, http.MethodPost, envs, "application/json", []byte(`{"name":"qa","hostname":"a b"}`))
	want(t, r, http.StatusUnprocessableEntity, "hostname_invalid")
	r = b.do(t, b.owner, http.MethodPost, envs, "application/json", []byte(`{"name":"demo","hostname":"demo-notes.example.com"}`))
	want(t, r, http.StatusCreated, "")
	hosts, _ := r.body["hostnames"].([]any)
	if r.body["name"] != "demo" || len(hosts) != 1 {
		t.Fatalf("created %s", r.raw)
	}
	h := hosts[0].(map[string]any)
	if h["hostname"] != "demo-notes.example.com" || h["shared"] != "notes-own.example.com" || h["variable"] != "hostname" || h["field"] != "spec.routes[0].hostname" {
		t.Fatalf("own hostname %s", r.raw)
	}
	r = b.do(t, b.owner, http.MethodGet, "/api/v1/applications/notes/manifest", "", nil)
	want(t, r, http.StatusOK, "")
	if src, _ := r.body["source"].(string); !strings.Contains(src, "# Notes.") || !strings.Contains(src, `demo-notes.example.com`) || !strings.Contains(src, `${{ vars.hostname }}`) {
		t.Fatalf("saved manifest %s", r.raw)
	}
}
