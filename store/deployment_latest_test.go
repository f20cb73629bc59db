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

	got, err := b.st.LatestDeploymentPerEnvironment(b.ctx, team, "")
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

	if p := got[b.a.env.ID].Latest; p.RenderedManifest != nil || p.Steps != nil || p.Revision != 1 || p.Actor != "system" {
		t.Errorf("production summary: %+v, want the state columns without manifests or steps", p)
	}
	// Filtered by application: another application of the team is left out.
	other, err := b.st.CreateApplication(b.ctx, team, "other")
	must(t, err)
	otherEnv, err := b.st.CreateEnvironment(b.ctx, team, store.EnvironmentParams{ApplicationID: other.ID, Kind: store.KindEnvironment, Name: "production", Slug: "other-production"})
	must(t, err)
	deploy(otherEnv.ID, store.StateFailed)
	if all, err := b.st.LatestDeploymentPerEnvironment(b.ctx, team, ""); err != nil || len(all) != 3 {
		t.Fatalf("whole team: %d environments, want 3 (%v)", len(all), err)
	}
	mine, err := b.st.LatestDeploymentPerEnvironment(b.ctx, team, b.a.app.ID)
	must(t, err)
	if _, leaked := mine[otherEnv.ID]; leaked || len(mine) != 2 {
		t.Errorf("application %s: %d environments %v, want its 2", b.a.app.ID, len(mine), mine)
	}
	if theirs, err := b.st.LatestDeploymentPerEnvironment(b.ctx, team, b.b.app.ID); err != nil || len(theirs) != 0 {
		t.Errorf("another team's application through team %s: %v %v, want none", team, theirs, err)
	}

	envs, err := b.st.ListTeamEnvironments(b.ctx, team)
	must(t, err)
	if len(envs) != 4 {
		t.Fatalf("ListTeamEnvironments: %d, want 4", len(envs))
	}
	for _, e := range envs {
		if e.TeamID != team {
			t.Fatalf("another team's environment %s", e.ID)
		}
	}
}
