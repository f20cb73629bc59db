package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/store"
)

// TestEnvironmentRoutes_CertificateStates lists an environment's routes
// with the certificate state the gateway reported: an issued certificate
// with its expiry and an https URL, a failed one with the error and an
// http URL, and unknown where nothing was reported yet.
func TestEnvironmentRoutes_CertificateStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDeploy(t)
	app, err := b.st.CreateApplication(ctx, b.team.ID, "shop")
	if err != nil {
		t.Fatal(err)
	}
	env, err := b.st.CreateEnvironment(ctx, b.team.ID, store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production"})
	if err != nil {
		t.Fatal(err)
	}
	route := func(host string) store.DeployedRoute {
		return store.DeployedRoute{Hostname: host, Visibility: "public", Service: "web", BackendService: "slw-web", BackendPort: 8080}
	}
	if err := b.st.SetEnvironmentRoutes(ctx, b.team.ID, env.ID, []store.DeployedRoute{
		route("shop.example.com"), route("broken.example.com"), route("new.example.com"),
	}); err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(90 * 24 * time.Hour).UTC().Truncate(time.Second)
	if err := b.st.ReportRouteCertificates(ctx, []store.RouteCertificate{
		{Hostname: "shop.example.com", State: "issued", ExpiresAt: &expires},
		{Hostname: "broken.example.com", State: "failed", LastError: "DNS problem: NXDOMAIN looking up A for broken.example.com"},
		{Hostname: "elsewhere.example.com", State: "issued", ExpiresAt: &expires}, // not routed: ignored
	}); err != nil {
		t.Fatal(err)
	}

	r := b.do(t, b.viewer, "GET", "/api/v1/applications/shop/environments/production/routes", "", nil)
	if r.status != 200 {
		t.Fatalf("routes: %d %s", r.status, r.raw)
	}
	var list api.EnvironmentRouteList
	mustDecode(t, r, &list)
	got := map[string]api.EnvironmentRoute{}
	for _, rt := range list.Routes {
		got[rt.Hostname] = rt
	}
	if len(got) != 3 {
		t.Fatalf("routes = %+v", list.Routes)
	}
	shop := got["shop.example.com"]
	if shop.Certificate.State != "issued" || shop.Certificate.ExpiresAt == nil || !shop.Certificate.ExpiresAt.Equal(expires) || shop.URL != "https://shop.example.com/" {
		t.Fatalf("issued route = %+v", shop)
	}
	broken := got["broken.example.com"]
	if broken.Certificate.State != "failed" || broken.Certificate.LastError == "" || broken.URL != "http://broken.example.com/" {
		t.Fatalf("failed route = %+v", broken)
	}
	if fresh := got["new.example.com"]; fresh.Certificate.State != "unknown" || fresh.URL != "http://new.example.com/" {
		t.Fatalf("unreported route = %+v", fresh)
	}
}
