package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// TestEnvironmentEndpoints_NeverReachPreviews sends every environment
// endpoint a preview's slug (404, the preview untouched, nothing queued)
// and then the name of an ordinary environment (reached), over HTTP
// against a real database; the preview endpoints keep reaching the
// preview.
func TestEnvironmentEndpoints_NeverReachPreviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDeploy(t)
	keyText, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.Parse([]byte(keyText))
	if err != nil {
		t.Fatal(err)
	}
	b.f = fiber.New(fiber.Config{BodyLimit: 1 << 20})
	api.Register(b.f.Group("/api/v1"), api.Config{Store: b.st, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Jobs: b.jobs, Runtime: b.runtime,
		Secrets: secrets.New(b.st, kr), Previews: &service.Previews{Store: b.st, Limits: service.PreviewLimits{MaxPerApplication: 5, MaxTotal: 5}}})
	want(t, b.apply(t, repositoryApp, ""), http.StatusCreated, "")
	created := b.do(t, b.owner, http.MethodPost, "/api/v1/applications/docs/previews", "application/json", []byte(`{"branch":"feat/x","deploy":false}`))
	want(t, created, http.StatusCreated, "")
	slug, _ := created.body["slug"].(string)
	docs := appID(t, b, "docs")
	before, err := b.st.GetPreviewBySlug(ctx, b.team.ID, docs, slug)
	if err != nil {
		t.Fatal(err)
	}
	envs, err := b.st.ListEnvironments(ctx, b.team.ID, docs)
	if err != nil {
		t.Fatal(err)
	}
	ordinary := ""
	for _, e := range envs {
		if e.Kind == store.KindEnvironment {
			ordinary = e.Name
		}
	}
	if ordinary == "" {
		t.Fatalf("applying created no environment: %+v", envs)
	}

	const notFound, unknown = service.CodeEnvironmentNotFound, "environment_unknown"
	endpoints := []struct {
		name, method, path, body string
		// previewCode is what a preview's slug answers (404); field edits
		// keep the spec's environment_unknown.
		previewCode string
		// envStatus and envCode are what the ordinary environment answers.
		envStatus int
		envCode   string
	}{
		{"status", http.MethodGet, "/status?env={env}", "", notFound, http.StatusOK, ""},
		{"generated secrets", http.MethodGet, "/environments/{env}/generated-secrets", "", notFound, http.StatusOK, ""},
		{"regenerate", http.MethodPost, "/environments/{env}/generated-secrets/token/regenerate", "", notFound, http.StatusNotFound, secrets.CodeGeneratedNotFound},
		{"routes", http.MethodGet, "/environments/{env}/routes", "", notFound, http.StatusOK, ""},
		{"links", http.MethodGet, "/environments/{env}/links", "", notFound, http.StatusOK, ""},
		{"visibility", http.MethodPut, "/environments/{env}/visibility", `{"visibility":"private"}`, unknown, http.StatusOK, ""},
		{"rollback", http.MethodPut, "/environments/{env}/rollback", `{"rollback":"manual"}`, unknown, http.StatusOK, ""},
		{"variable set", http.MethodPut, "/variables/colour?env={env}", `{"value":"red"}`, unknown, http.StatusOK, ""},
		{"variable unset", http.MethodDelete, "/variables/colour?env={env}", "", unknown, http.StatusOK, ""},
		{"branch", http.MethodPut, "/environments/{env}/branch", `{"branch":"feat/x"}`, notFound, http.StatusOK, ""},
		{"source", http.MethodPut, "/environments/{env}/source", `{"tracking":true}`, notFound, http.StatusUnprocessableEntity, "environment_declared"},
		{"telemetry", http.MethodPut, "/environments/{env}/telemetry", `{"granted":true}`, notFound, http.StatusOK, ""},
		{"promote", http.MethodPost, "/environments/{env}/promote", `{"plan":true}`, notFound, http.StatusUnprocessableEntity, "environment_not_promoted"},
		{"deploy", http.MethodPost, "/environments/{env}/deploy", "", notFound, http.StatusAccepted, ""},
		{"deploy a branch", http.MethodPost, "/environments/{env}/deploy", `{"branch":"feat/x"}`, notFound, http.StatusAccepted, ""},
		// The field edits above declared the environment.
		{"delete", http.MethodDelete, "/environments/{env}", "", notFound, http.StatusUnprocessableEntity, "environment_declared"},
	}
	call := func(method, path, env, body string) reply {
		t.Helper()
		path = "/api/v1/applications/docs" + strings.ReplaceAll(path, "{env}", env)
		contentType := ""
		if body != "" {
			contentType = "application/json"
		}
		return b.do(t, b.owner, method, path, contentType, []byte(body))
	}
	for _, e := range endpoints {
		r := call(e.method, e.path, slug, e.body)
		if r.status != http.StatusNotFound || r.body["code"] != e.previewCode {
			t.Errorf("%s with the preview's slug: %d %s, want 404 %s", e.name, r.status, r.raw, e.previewCode)
		}
		if r := call(e.method, e.path, "nowhere", e.body); r.status != http.StatusNotFound || r.body["code"] != e.previewCode {
			t.Errorf("%s with an unknown name: %d %s, want 404 %s", e.name, r.status, r.raw, e.previewCode)
		}
	}
	if n := len(b.jobs.queued()); n != 0 {
		t.Fatalf("environment endpoints aimed at a preview queued %d deployments", n)
	}
	after, err := b.st.GetPreviewBySlug(ctx, b.team.ID, docs, slug)
	if err != nil || after.Branch != before.Branch || after.Visibility != before.Visibility || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("preview after the environment endpoints: %+v (%v), want it as it was: %+v", after, err, before)
	}
	if ds, err := b.st.ListDeployments(ctx, b.team.ID, store.DeploymentFilter{EnvironmentID: before.ID}); err != nil || len(ds) != 0 {
		t.Fatalf("preview has %d deployments (%v), want none", len(ds), err)
	}

	// The ordinary environment is reached by the same endpoints.
	for _, e := range endpoints {
		r := call(e.method, e.path, ordinary, e.body)
		if r.status != e.envStatus || (e.envCode != "" && r.body["code"] != e.envCode) {
			t.Errorf("%s with environment %s: %d %s, want %d %s", e.name, ordinary, r.status, r.raw, e.envStatus, e.envCode)
		}
	}
	status := call(http.MethodGet, "/status", "", "")
	want(t, status, http.StatusOK, "")
	if strings.Contains(status.raw, slug) {
		t.Errorf("status lists the preview: %s", status.raw)
	}

	// The preview endpoints reach the preview.
	for _, path := range []string{"/previews/" + slug, "/previews/" + slug + "/routes", "/previews/" + slug + "/links"} {
		want(t, call(http.MethodGet, path, "", ""), http.StatusOK, "")
	}
	want(t, call(http.MethodGet, "/previews/"+ordinary+"/routes", "", ""), http.StatusNotFound, "not_found")
	deployed := call(http.MethodPost, "/previews/"+slug+"/deploy", "", "")
	want(t, deployed, http.StatusAccepted, "")
	if deployed.body["environment"] != slug {
		t.Errorf("preview deploy %s, want a deployment of %s", deployed.raw, slug)
	}
}
