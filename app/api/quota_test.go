package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/slipwayhq/slipway/quota"
)

// TestAPI_QuotaExceeded: an apply past a quota is answered 422
// quota_exceeded with the field, the quota, its limit and the use, and
// saves nothing.
func TestAPI_QuotaExceeded(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	ctx := context.Background()
	if err := b.st.SetTeamQuotas(ctx, b.team.ID, quota.Row(map[quota.Name]int64{quota.Replicas: 0})); err != nil {
		t.Fatal(err)
	}
	r := b.apply(t, notes, "?deploy=true")
	want(t, r, http.StatusUnprocessableEntity, quota.Code)
	d, _ := r.body["details"].(map[string]any)
	if d["quota"] != "replicas" || d["limit"] != float64(0) || d["use"] != float64(0) || d["requested"] != float64(1) || d["field"] != "spec.services" {
		t.Fatalf("details %v, want replicas, limit 0, use 0, requested 1 on spec.services", d)
	}
	if apps, _ := b.st.ListApplications(ctx, b.team.ID); len(apps) != 0 || len(b.jobs.queued()) != 0 {
		t.Fatalf("a refused apply left %d applications and %d queued deployments", len(apps), len(b.jobs.queued()))
	}
}
