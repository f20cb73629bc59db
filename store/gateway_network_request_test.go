package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

func init() {
	for _, m := range []string{"RequestGatewayNetwork", "EndGatewayNetworkRequest"} {
		tenancyCovered[m] = "TestGatewayNetworkRequests"
	}
}

// TestGatewayNetworkRequests lists the networks of unexpired requests
// (one per environment, replaced by the next) and when the first expires;
// every change bumps the route table version, so the gateways' table
// moves; another team can neither request for nor end a team's
// environment; expired requests are deleted, and a deleted environment's
// go with it.
func TestGatewayNetworkRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st := b.ctx, b.st
	version := func() int64 {
		v, err := st.RouteTableVersion(ctx)
		must(t, err)
		return v
	}
	requested := func() ([]string, time.Time) {
		names, next, err := st.RequestedGatewayNetworks(ctx)
		must(t, err)
		return names, next
	}
	soon, later := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond), time.Now().Add(2*time.Hour).UTC().Truncate(time.Microsecond)
	v0 := version()
	must(t, st.RequestGatewayNetwork(ctx, b.a.team.ID, b.a.env.ID, "slw-a-ingress", later))
	must(t, st.RequestGatewayNetwork(ctx, b.b.team.ID, b.b.env.ID, "slw-b-ingress", soon))
	if v := version(); v < v0+2 {
		t.Fatalf("version %d after two requests, want at least %d", v, v0+2)
	}
	if names, next := requested(); !slices.Equal(names, []string{"slw-a-ingress", "slw-b-ingress"}) || !next.Equal(soon) {
		t.Fatalf("requested %v, first expiring %s, want both and %s", names, next, soon)
	}

	// Another team's ids reach nothing.
	wantErr(t, st.RequestGatewayNetwork(ctx, b.a.team.ID, b.b.env.ID, "slw-x-ingress", later), store.ErrNotFound)
	must(t, st.EndGatewayNetworkRequest(ctx, b.a.team.ID, b.b.env.ID))
	if names, _ := requested(); len(names) != 2 {
		t.Fatalf("requested %v after another team's attempts, want both untouched", names)
	}

	// Renewing a request moves the table (serve reloads when the first
	// expires), and so does ending one.
	v1 := version()
	must(t, st.RequestGatewayNetwork(ctx, b.a.team.ID, b.a.env.ID, "slw-a-ingress", later.Add(time.Minute)))
	v2 := version()
	if v2 <= v1 {
		t.Fatalf("version %d after renewing a request, want more than %d", v2, v1)
	}
	must(t, st.EndGatewayNetworkRequest(ctx, b.b.team.ID, b.b.env.ID))
	if v := version(); v <= v2 {
		t.Fatalf("version %d after ending a request, want more than %d", v, v2)
	}
	if names, next := requested(); !slices.Equal(names, []string{"slw-a-ingress"}) || !next.Equal(later.Add(time.Minute)) {
		t.Fatalf("requested %v (%s) after b's ended", names, next)
	}

	// An expired request is not listed, and expiring deletes it.
	must(t, st.RequestGatewayNetwork(ctx, b.b.team.ID, b.b.env.ID, "slw-b-ingress", time.Now().Add(-time.Second)))
	if names, _ := requested(); !slices.Equal(names, []string{"slw-a-ingress"}) {
		t.Fatalf("requested %v with b's expired", names)
	}
	v3 := version()
	if n, err := st.ExpireGatewayNetworkRequests(ctx); err != nil || n != 1 {
		t.Fatalf("expired %d, %v; want 1", n, err)
	}
	if v := version(); v <= v3 {
		t.Fatalf("version %d after expiring, want more than %d", v, v3)
	}

	// Deleting the environment ends its request.
	must(t, st.DeleteApplication(ctx, b.a.team.ID, b.a.app.ID))
	if err := st.PurgeApplication(ctx, b.a.team.ID, b.a.app.ID); err != nil {
		t.Fatal(err)
	}
	if names, next := requested(); len(names) != 0 || !next.IsZero() {
		t.Fatalf("requested %v (%s) after the environment was deleted", names, next)
	}
}
