package store_test

import (
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func TestStore_LatestDeploymentPerEnvironment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	team := b.a.team.ID
	staging, err := b.st.CreateEnvironment(b.ctx, team, store.EnvironmentParams{ApplicationID: b.a.app.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "notes-staging"})
	must(t, err)
	idle, err := b.st.CreateEnvironment(b.ctx, team, store.EnvironmentParams{ApplicationID: b.a.app.ID, Kind: store.KindEnvironment, Name: "idle", Slug: "notes-idle"})
	must(t, err)
	deploy := func(envID string, path ...store.DeploymentState) store.Deployment {
		t.Helper()
		d, err := b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{EnvironmentID: envID, Revision: 1, Origin: store.OriginBuild, Actor: "system"})
		must(t, err)
		from := store.StateRequested
		for _, to := range path {
			d, err = b.st.TransitionDeployment(b.ctx, team, d.ID, []store.DeploymentState{from}, to)
			must(t, err)
			from = to
		}
		return d
	}
	// production: succeeded, then a newer failed attempt; staging: only failed.
	deploy(b.a.env.ID, store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded)
	newest := deploy(b.a.env.ID, store.StateFailed)
	stagingFailed := deploy(staging.ID, store.StateFailed)
	// The other tenant's deployment must not show up.
	_, err = b.st.CreateDeployment(b.ctx, b.b.team.ID, store.DeploymentParams{EnvironmentID: b.b.env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "system"})
	must(t, err)

	got, err := b.st.LatestDeploymentPerEnvironment(b.ctx, team)
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("%d environments, want 2 (idle %s never deployed, the other team's excluded): %v", len(got), idle.ID, got)
	}
	if p := got[b.a.env.ID]; p.Latest.ID != newest.ID || !p.EverSucceeded {
		t.Errorf("production: latest %s (want %s), ever succeeded %v", p.Latest.ID, newest.ID, p.EverSucceeded)
	}
	if s := got[staging.ID]; s.Latest.ID != stagingFailed.ID || s.EverSucceeded || s.Latest.State != store.StateFailed {
		t.Errorf("staging: %+v", s)
	}

	envs, err := b.st.ListTeamEnvironments(b.ctx, team)
	must(t, err)
	if len(envs) != 3 {
		t.Fatalf("ListTeamEnvironments: %d, want 3", len(envs))
	}
	for _, e := range envs {
		if e.TeamID != team {
			t.Fatalf("another team's environment %s", e.ID)
		}
	}
}
