package api_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/service"
)

const repositoryApp = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "docs"
[spec.manifest]
path = "slipway.toml"
repository = { url = "https://git.example.com/docs.git", branch = "main" }
`

// TestPreviews_API drives the preview endpoints over HTTP against a real
// database. The server has no way to list branches here, so every branch
// state is unknown, which is what pruning must never treat as gone.
func TestPreviews_API(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.do(t, b.owner, http.MethodGet, "/api/v1/applications/notes/previews", "", nil), http.StatusServiceUnavailable, "previews_unavailable")

	previews := &service.Previews{Store: b.st, Limits: service.PreviewLimits{MaxPerApplication: 1, MaxTotal: 10}}
	b.f = fiber.New(fiber.Config{BodyLimit: 1 << 20})
	api.Register(b.f.Group("/api/v1"), api.Config{Store: b.st, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Jobs: b.jobs, Runtime: b.runtime, Previews: previews})
	want(t, b.apply(t, repositoryApp, ""), http.StatusCreated, "")
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")

	post := func(secret, path, body string) reply {
		return b.do(t, secret, http.MethodPost, "/api/v1/applications/"+path, "application/json", []byte(body))
	}
	want(t, post(b.owner, "notes/previews", `{"branch":"main"}`), http.StatusUnprocessableEntity, service.CodePreviewRequiresRepository)
	want(t, post(b.viewer, "docs/previews", `{"branch":"feat/x"}`), http.StatusForbidden, "")
	want(t, post(b.owner, "docs/previews", `{"branch":"feat/x","colour":"red"}`), http.StatusBadRequest, "field_unknown")
	want(t, post(b.owner, "docs/previews", `{"branch":"feat..x"}`), http.StatusUnprocessableEntity, "branch_invalid")

	created := post(b.owner, "docs/previews", `{"branch":"feat/x"}`)
	want(t, created, http.StatusCreated, "")
	slug, _ := created.body["slug"].(string)
	if !strings.HasPrefix(slug, "docs-feat-x-") || created.body["created"] != true || created.body["deployment"] == nil {
		t.Fatalf("created %s, want a deployed preview docs-feat-x-<hash>", created.raw)
	}
	if n := len(b.jobs.queued()); n != 1 {
		t.Fatalf("%d deployments queued, want 1", n)
	}
	// A preview is no environment: GET environments leaves it out.
	envs := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/docs/environments", "", nil)
	want(t, envs, http.StatusOK, "")
	if strings.Contains(envs.raw, slug) || strings.Contains(envs.raw, `"preview"`) {
		t.Fatalf("environments %s list the preview %s", envs.raw, slug)
	}
	again := post(b.owner, "docs/previews", `{"branch":"feat/x"}`)
	want(t, again, http.StatusOK, "")
	if again.body["created"] != false || again.body["slug"] != slug || len(b.jobs.queued()) != 1 {
		t.Fatalf("creating again gave %s and %d deployments, want the same preview, none new", again.raw, len(b.jobs.queued()))
	}
	want(t, post(b.owner, "docs/previews", `{"branch":"feat/y"}`), http.StatusConflict, service.CodePreviewLimitReached)

	list := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/docs/previews", "", nil)
	want(t, list, http.StatusOK, "")
	items, _ := list.body["previews"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["branch_state"] != "unknown" {
		t.Fatalf("list %s, want one preview with branch state unknown", list.raw)
	}
	shown := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/docs/previews/"+slug, "", nil)
	want(t, shown, http.StatusOK, "")
	want(t, b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/docs/previews/nope", "", nil), http.StatusNotFound, "not_found")

	want(t, post(b.owner, "docs/previews/prune", `{}`), http.StatusUnprocessableEntity, "prune_criterion_missing")
	want(t, post(b.owner, "docs/previews/prune", `{"branch_gone":true,"confirm":true}`), http.StatusBadGateway, "repository_unreachable")

	want(t, post(b.owner, "docs/previews/"+slug+"/deploy", ``), http.StatusAccepted, "")
	deleted := b.do(t, b.owner, http.MethodDelete, "/api/v1/applications/docs/previews/"+slug, "", nil)
	want(t, deleted, http.StatusAccepted, "")
	if deleted.body["deleting"] != true {
		t.Fatalf("delete answered %s, want the preview marked deleting", deleted.raw)
	}
	want(t, post(b.owner, "docs/previews/"+slug+"/deploy", ``), http.StatusConflict, service.CodePreviewDeleting)
	b.jobs.mu.Lock()
	kinds := strings.Join(b.jobs.kinds, ",")
	b.jobs.mu.Unlock()
	if !strings.Contains(kinds, "preview_delete") {
		t.Fatalf("jobs queued %q, want preview_delete", kinds)
	}
}
