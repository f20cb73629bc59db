package storetest

import (
	"context"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// Tenant is a team with one application and that application's
// production environment.
type Tenant struct {
	Team store.Team
	App  store.Application
	Env  store.Environment
}

// NewTenant creates in st the team team (its name and slug), its
// application app and the production environment, failing the test on any
// error: the fixture of tests that store routes or deployments.
func NewTenant(t testing.TB, st *store.Store, team, app string) Tenant {
	t.Helper()
	ctx := context.Background()
	var tn Tenant
	var err error
	if tn.Team, err = st.CreateTeam(ctx, team, team); err != nil {
		t.Fatalf("create team %s: %v", team, err)
	}
	if tn.App, err = st.CreateApplication(ctx, tn.Team.ID, app); err != nil {
		t.Fatalf("create application %s: %v", app, err)
	}
	tn.Env, err = st.CreateEnvironment(ctx, tn.Team.ID, store.EnvironmentParams{
		ApplicationID: tn.App.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production",
	})
	if err != nil {
		t.Fatalf("create environment production: %v", err)
	}
	return tn
}
