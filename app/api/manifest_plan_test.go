package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/manifest"
)

// TestPlan_SpecHash: POST /applications/plan answers the plan with the
// spec hash a deployment to each environment would record, beside the
// running one, and changes nothing.
func TestPlan_SpecHash(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	plan := func(doc string) api.PlanResponse {
		t.Helper()
		r := b.do(t, b.viewer, http.MethodPost, "/api/v1/applications/plan", "application/toml", []byte(doc))
		want(t, r, http.StatusOK, "")
		var p api.PlanResponse
		if err := json.Unmarshal([]byte(r.raw), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	byService := func(e manifest.EnvironmentHash) map[string]manifest.ServiceHashChange {
		out := map[string]manifest.ServiceHashChange{}
		for _, s := range e.Services {
			out[s.Service] = s
		}
		return out
	}
	withWorker := notes + `
[[spec.services]]
name = "worker"
[spec.services.source]
type = "image"
image = "example.com/worker:1"
`
	// A new application: nothing compared, every service added.
	p := plan(withWorker)
	if p.Against != 0 || len(p.Hashes) != 1 || p.Hashes[0].Environment != "production" || p.Hashes[0].SpecHash == "" {
		t.Fatalf("new application plan: %+v", p)
	}
	if s := byService(p.Hashes[0]); s["web"].Change != manifest.HashAdded || s["worker"].Change != manifest.HashAdded {
		t.Fatalf("new application services: %+v", s)
	}
	want(t, b.apply(t, withWorker, ""), http.StatusCreated, "")
	b.deployed(t, "notes", "production", withWorker)

	p = plan(withWorker)
	h := p.Hashes[0]
	if p.Against != 1 || h.Changed || h.SpecHash == "" || h.SpecHash != h.DeployedSpecHash {
		t.Fatalf("the running manifest planned again: %+v", p)
	}
	changed := plan(strings.Replace(withWorker, "example.com/notes:1", "example.com/notes:2", 1)).Hashes[0]
	if !changed.Changed || changed.SpecHash == h.SpecHash || changed.DeployedSpecHash != h.SpecHash {
		t.Fatalf("a new web image: %+v (running %s)", changed, h.SpecHash)
	}
	s := byService(changed)
	if s["web"].Change != manifest.HashChanged || s["worker"].Change != manifest.HashUnchanged || s["web"].DeployedSpecHash == s["web"].SpecHash {
		t.Fatalf("a new web image: services %+v", s)
	}

	// Planning saves nothing, and an invalid manifest is 422 as for apply.
	if p := plan(withWorker); p.Against != 1 {
		t.Fatalf("a plan saved a revision: against %d", p.Against)
	}
	r := b.do(t, b.viewer, http.MethodPost, "/api/v1/applications/plan", "application/toml", []byte(strings.Replace(notes, `name = "web"`, `name = "Web_X"`, 1)))
	want(t, r, http.StatusUnprocessableEntity, "manifest_validation_failed")
}
