package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/quota"
)

// TestQuotas_PageAndRefusal: the Quotas page lists every quota with the
// team's limit (its own marked) and use; a save past one is refused in the
// editor with quota_exceeded naming it, and the page shows the limit full.
func TestQuotas_PageAndRefusal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner, br, _ := b.ownerWithApp(t, shopManifest("1"))
	ctx := context.Background()
	if err := b.store.SetTeamQuotas(ctx, owner.team.ID, quota.Row(map[quota.Name]int64{quota.Applications: 1})); err != nil {
		t.Fatal(err)
	}
	r := br.get("/quotas")
	wantStatus(t, r, http.StatusOK)
	if n := testid(r, "quota-row").Length(); n != len(quota.All) {
		t.Fatalf("%d quota rows, want %d", n, len(quota.All))
	}
	row := r.doc.Find(`[data-testid="quota-row"][data-quota="applications"]`)
	if use := strings.TrimSpace(row.Find(`[data-testid="quota-use"]`).Text()); use != "1" {
		t.Errorf("applications use %q, want 1", use)
	}
	if lim := row.Find(`[data-testid="quota-limit"]`).Text(); !strings.Contains(lim, "1") || !strings.Contains(lim, "team") {
		t.Errorf("applications limit %q, want 1 marked as the team's own", lim)
	}
	if row.Find(`[data-testid="quota-full"]`).Length() != 1 {
		t.Error("a quota at its limit is not marked full")
	}
	if lim := r.doc.Find(`[data-testid="quota-row"][data-quota="volumes"] [data-testid="quota-limit"]`).Text(); !strings.Contains(lim, "unlimited") {
		t.Errorf("volumes limit %q, want unlimited (no default in this test)", lim)
	}

	r = br.post("/manifest", url.Values{"manifest": {strings.Replace(shopManifest("1"), `name = "shop"`, `name = "shop2"`, 1)}, "intent": {"save"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if msg := r.body; !strings.Contains(msg, quota.Code) || !strings.Contains(msg, "applications quota is 1") {
		t.Fatalf("the editor does not say the quota was exceeded: %s", truncate(msg))
	}
}
