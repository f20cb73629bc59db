package api_test

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/gitsnapshot"
)

// TestPreviews_LocalAPI uploads a worktree snapshot over HTTP: viewers
// may not, anything but a snapshot bundle is refused, and a bundle
// creates the preview of its branch and slot, deploys it and lists it as
// local.
func TestPreviews_LocalAPI(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	previews := &service.Previews{Store: b.st, Limits: service.PreviewLimits{MaxPerApplication: 5, MaxTotal: 10}}
	b.f = fiber.New(fiber.Config{BodyLimit: 1 << 20})
	api.Register(b.f.Group("/api/v1"), api.Config{Store: b.st, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Jobs: b.jobs, Runtime: b.runtime, Previews: previews})
	want(t, b.apply(t, repositoryApp, ""), http.StatusCreated, "")

	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slipway.toml"), []byte("# committed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	if _, err := wt.Add("slipway.toml"); err != nil {
		t.Fatal(err)
	}
	base, err := wt.Commit("base", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slipway.toml"), []byte("# uncommitted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := gitsnapshot.Create(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}

	upload := func(secret string, body []byte) reply {
		return b.do(t, secret, http.MethodPost, "/api/v1/applications/docs/previews/local?slot=agent-1", api.SnapshotContentType, body)
	}
	want(t, upload(b.viewer, snap.Bundle), http.StatusForbidden, "")
	want(t, upload(b.owner, []byte("# v2 git bundle\nnot really\n")), http.StatusUnprocessableEntity, service.CodeSnapshotInvalid)
	if n := len(b.jobs.queued()); n != 0 {
		t.Fatalf("%d deployments queued by refused uploads", n)
	}

	got := upload(b.owner, snap.Bundle)
	want(t, got, http.StatusAccepted, "")
	if got.body["created"] != true || got.body["branch"] != "master" || got.body["slot"] != "agent-1" ||
		got.body["commit"] != snap.Commit || got.body["base"] != base.String() || got.body["deployment"] == nil {
		t.Fatalf("local deploy answered %s, want preview of master/agent-1 at %s on %s", got.raw, snap.Commit, base)
	}
	if n := len(b.jobs.queued()); n != 1 {
		t.Fatalf("%d deployments queued, want 1", n)
	}
	list := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/docs/previews", "", nil)
	want(t, list, http.StatusOK, "")
	items, _ := list.body["previews"].([]any)
	if len(items) != 1 {
		t.Fatalf("list %s, want one preview", list.raw)
	}
	p := items[0].(map[string]any)
	if p["branch_state"] != "local" || p["snapshot_commit"] != snap.Commit || p["snapshot_base"] != base.String() {
		t.Fatalf("listed %s, want branch state local at %s on %s", list.raw, snap.Commit, base)
	}
}
