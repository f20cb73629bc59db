package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// TestManifestPlan_SpecHash: the dashboard plan shows the spec hash a
// deployment to each environment would record, beside the one running,
// and marks the services whose hash changes.
func TestManifestPlan_SpecHash(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	two := shopManifest("2") + `
[[spec.services]]
name = "worker"
[spec.services.source]
type = "image"
image = "registry.example/worker:1"
`
	owner, br, a := b.ownerWithApp(t, two)
	envs, err := b.store.ListEnvironments(ctx, owner.team.ID, a.ID)
	if err != nil || len(envs) != 1 {
		t.Fatalf("environments %v %v", envs, err)
	}
	plan := func(src string) response {
		t.Helper()
		r := br.htmx("/manifest/plan", url.Values{"manifest": {src}, "application": {a.ID}, "expected_revision": {"1"}})
		wantStatus(t, r, http.StatusOK)
		return r
	}
	hashOf := func(r response) string {
		t.Helper()
		return r.doc.Find(`[data-testid="plan-hash"][data-environment="production"] [data-testid="plan-spec-hash"]`).Text()
	}
	change := func(r response, service string) string {
		v, _ := r.doc.Find(`[data-testid="plan-hash"][data-environment="production"] [data-testid="plan-service-hash"][data-service="` + service + `"]`).Attr("data-change")
		return v
	}

	// Nothing runs yet: every service is added.
	r := plan(two)
	if hashOf(r) == "" || change(r, "web") != manifest.HashAdded || change(r, "worker") != manifest.HashAdded {
		t.Fatalf("before any deployment: hash %q, web %q, worker %q", hashOf(r), change(r, "web"), change(r, "worker"))
	}

	running := finishBuild(t, b.store, owner.team.ID, envs[0])
	r = plan(two)
	if got := hashOf(r); got != running.SpecHash {
		t.Fatalf("the running manifest planned again: hash %q, want the deployed %q", got, running.SpecHash)
	}
	if change(r, "web") != manifest.HashUnchanged || change(r, "worker") != manifest.HashUnchanged {
		t.Fatalf("unchanged manifest: web %q, worker %q", change(r, "web"), change(r, "worker"))
	}

	// Three web replicas: a new spec hash, and only web changes.
	r = plan(shopManifest("3") + two[len(shopManifest("2")):])
	if got := hashOf(r); got == "" || got == running.SpecHash {
		t.Fatalf("changed manifest: hash %q, want a new one (running %s)", got, running.SpecHash)
	}
	if change(r, "web") != manifest.HashChanged || change(r, "worker") != manifest.HashUnchanged {
		t.Fatalf("changed manifest: web %q, worker %q; want changed, unchanged", change(r, "web"), change(r, "worker"))
	}
	// Dropping the worker marks it removed.
	r = plan(shopManifest("2"))
	if change(r, "worker") != manifest.HashRemoved {
		t.Fatalf("worker dropped: %q", change(r, "worker"))
	}
}
