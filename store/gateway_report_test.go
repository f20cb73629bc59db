package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// TestGatewayReports keeps one report per gateway, the last one, and lists
// only those received since a time.
func TestGatewayReports(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st := b.ctx, b.st
	id := randomHex(t)
	a, other := "gw-a-"+id, "gw-b-"+id
	must(t, st.ReportGateway(ctx, store.GatewayReport{Gateway: a, TableVersion: 4, Live: []string{"one.example.com"}}))
	must(t, st.ReportGateway(ctx, store.GatewayReport{Gateway: a, TableVersion: 5, Live: []string{"one.example.com", "two.example.com"}}))
	must(t, st.ReportGateway(ctx, store.GatewayReport{Gateway: other, TableVersion: 5}))
	got, err := st.ListGatewayReports(ctx, time.Now().Add(-time.Hour))
	must(t, err)
	var mine []store.GatewayReport
	for _, r := range got {
		if r.Gateway == a || r.Gateway == other {
			mine = append(mine, r)
		}
	}
	if len(mine) != 2 || mine[0].Gateway != a || mine[0].TableVersion != 5 ||
		!slices.Equal(mine[0].Live, []string{"one.example.com", "two.example.com"}) || mine[1].Live == nil || len(mine[1].Live) != 0 {
		t.Fatalf("reports = %+v", mine)
	}
	if mine[0].ReportedAt.IsZero() {
		t.Fatal("no report time")
	}
	got, err = st.ListGatewayReports(ctx, time.Now().Add(time.Hour))
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("reports since an hour from now: %+v", got)
	}
}
