package store_test

import (
	"slices"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestRoutedIngressNetworks lists each routed environment's overlay once,
// across teams, and leaves out redirect-only environments and those whose
// routes are gone.
func TestRoutedIngressNetworks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st := b.ctx, b.st
	id := randomHex(t)
	backend := func(host, network string) store.DeployedRoute {
		return store.DeployedRoute{Hostname: host + "-" + id + ".example.com", Visibility: "public",
			BackendService: "svc", BackendPort: 80, BackendNetwork: network}
	}
	redirect := store.DeployedRoute{Hostname: "old-" + id + ".example.com", Visibility: "public",
		RedirectTo: "https://example.com", RedirectStatus: 308}

	got, err := st.RoutedIngressNetworks(ctx)
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("with no routes: %v", got)
	}
	must(t, st.SetEnvironmentRoutes(ctx, b.a.team.ID, b.a.env.ID, []store.DeployedRoute{
		backend("a1", "slw-a-ingress"), backend("a2", "slw-a-ingress"), redirect,
	}))
	must(t, st.SetEnvironmentRoutes(ctx, b.b.team.ID, b.b.env.ID, []store.DeployedRoute{backend("b1", "slw-b-ingress")}))
	got, err = st.RoutedIngressNetworks(ctx)
	must(t, err)
	if want := []string{"slw-a-ingress", "slw-b-ingress"}; !slices.Equal(got, want) {
		t.Fatalf("networks = %v, want %v", got, want)
	}

	// Redirects alone need no overlay; a released environment none either.
	must(t, st.SetEnvironmentRoutes(ctx, b.a.team.ID, b.a.env.ID, []store.DeployedRoute{redirect}))
	_, err = st.DeleteEnvironmentRoutes(ctx, b.b.team.ID, b.b.env.ID)
	must(t, err)
	got, err = st.RoutedIngressNetworks(ctx)
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("after redirect-only and release: %v", got)
	}
}
