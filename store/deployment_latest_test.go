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
		return deployThrough(t, b, team, envID, path...)
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

	// The applications list's read: environments, not previews, each with
	// its newest deployment's summary.
	preview, err := b.st.CreateEnvironment(b.ctx, team, store.EnvironmentParams{ApplicationID: b.a.app.ID, Kind: store.KindPreview, Name: "feature", Slug: "notes-feature", Branch: "feature"})
	must(t, err)
	deploy(preview.ID, store.StateFailed)
	must(t, b.st.SetDeploymentRef(b.ctx, team, newest.ID, store.GitRef{Branch: "main", Commit: "abc1234def"}))
	list, err := b.st.ListEnvironmentsLatest(b.ctx, team, []string{b.a.app.ID, other.ID, b.b.app.ID})
	must(t, err)
	byID := map[string]store.EnvironmentLatest{}
	for _, e := range list {
		byID[e.ID] = e
	}
	if _, ok := byID[preview.ID]; ok || len(list) != 4 {
		t.Fatalf("ListEnvironmentsLatest: %+v, want the team's 4 environments without the preview", list)
	}
	if p := byID[b.a.env.ID]; p.Latest == nil || p.Latest.ID != newest.ID || p.Latest.State != store.StateFailed || !p.EverSucceeded || p.Latest.Actor != "system" || p.Latest.CreatedAt.IsZero() || p.Commit != "abc1234def" {
		t.Errorf("production: %+v, want the failed newest and ever succeeded", p)
	}
	if s := byID[staging.ID]; s.Latest == nil || s.Latest.ID != stagingFailed.ID || s.EverSucceeded || s.Name != "staging" || s.ApplicationID != b.a.app.ID || s.Commit != "" {
		t.Errorf("staging: %+v", s)
	}
	if i := byID[idle.ID]; i.Latest != nil || i.EverSucceeded {
		t.Errorf("idle: %+v, want never deployed", i)
	}
	// Only the applications asked for, and never another team's.
	if one, err := b.st.ListEnvironmentsLatest(b.ctx, team, []string{other.ID}); err != nil || len(one) != 1 || one[0].ID != otherEnv.ID {
		t.Errorf("application %s only: %+v %v, want its one environment", other.ID, one, err)
	}
	if theirs, err := b.st.ListEnvironmentsLatest(b.ctx, team, []string{b.b.app.ID}); err != nil || len(theirs) != 0 {
		t.Errorf("another team's application through team %s: %+v %v, want none", team, theirs, err)
	}
}

func TestStore_CurrentDeploymentsOf(t *testing.T) {
	t.Parallel()
	b := setup(t)
	team := b.a.team.ID
	env := func(name string, kind store.EnvironmentKind) store.Environment {
		t.Helper()
		e, err := b.st.CreateEnvironment(b.ctx, team, store.EnvironmentParams{ApplicationID: b.a.app.ID, Kind: kind, Name: name, Slug: "notes-" + name, Branch: name})
		must(t, err)
		return e
	}
	staging, live, idle, preview := env("staging", store.KindEnvironment), env("live", store.KindEnvironment), env("idle", store.KindEnvironment), env("feature", store.KindPreview)
	deploy := func(envID string, path ...store.DeploymentState) store.Deployment {
		t.Helper()
		return deployThrough(t, b, team, envID, path...)
	}
	success := []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded}
	// production: two successes, then a newer failed attempt; staging:
	// only failed; live: its newest succeeded; the preview is left out.
	deploy(b.a.env.ID, success...)
	running := deploy(b.a.env.ID, success...)
	newest := deploy(b.a.env.ID, store.StateCapturing, store.StateFailed)
	stagingFailed := deploy(staging.ID, store.StateCapturing, store.StateFailed)
	deploy(live.ID, success...)
	liveNow := deploy(live.ID, success...)
	deploy(preview.ID, success...)
	got, err := b.st.CurrentDeploymentsOf(b.ctx, team, b.a.app.ID)
	must(t, err)
	if len(got) != 3 {
		t.Fatalf("%d environments, want 3 (idle %s never deployed, preview %s left out): %v", len(got), idle.ID, preview.ID, got)
	}
	if p := got[b.a.env.ID]; p.Latest == nil || p.Latest.ID != newest.ID || p.Succeeded == nil || p.Succeeded.ID != running.ID {
		t.Errorf("production: %+v, want latest %s and succeeded %s", p, newest.ID, running.ID)
	}
	if s := got[staging.ID]; s.Latest == nil || s.Latest.ID != stagingFailed.ID || s.Succeeded != nil {
		t.Errorf("staging: %+v, want latest %s and none succeeded", s, stagingFailed.ID)
	}
	if l := got[live.ID]; l.Latest == nil || l.Latest.ID != liveNow.ID || l.Succeeded == nil || l.Succeeded.ID != liveNow.ID {
		t.Errorf("live: %+v, want %s as both", l, liveNow.ID)
	}
	for id, c := range got {
		for _, d := range []*store.Deployment{c.Latest, c.Succeeded} {
			if d != nil && (d.CapturedManifest != nil || d.Variables != nil || string(d.RenderedManifest) != `{"r": 1}` || d.EnvironmentID != id) {
				t.Errorf("deployment %s: captured %s, variables %s, rendered %s; want only the rendered manifest", d.ID, d.CapturedManifest, d.Variables, d.RenderedManifest)
			}
		}
	}
	if theirs, err := b.st.CurrentDeploymentsOf(b.ctx, team, b.b.app.ID); err != nil || len(theirs) != 0 {
		t.Errorf("another team's application through team %s: %v %v, want none", team, theirs, err)
	}

	// The newest deployment's actor comes with the email of a member only:
	// not the system's, nor another team's user's.
	for envID, actor := range map[string]string{staging.ID: "user:" + b.a.owner.ID, live.ID: "user:" + b.b.owner.ID} {
		_, err := b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{EnvironmentID: envID, Revision: 1, Origin: store.OriginBuild, Actor: actor})
		must(t, err)
	}
	got, err = b.st.CurrentDeploymentsOf(b.ctx, team, b.a.app.ID)
	must(t, err)
	for envID, want := range map[string]string{staging.ID: b.a.owner.Email, live.ID: "", b.a.env.ID: ""} {
		if e := got[envID].LatestActorEmail; e != want {
			t.Errorf("environment %s: newest deployment's actor email %q, want %q", envID, e, want)
		}
	}
}

// deployThrough requests a deployment of one of team's environments and
// moves it along path; on the way through capturing it records a capture
// (manifest, rendered manifest and variables).
func deployThrough(t *testing.T, b *testBundle, team, envID string, path ...store.DeploymentState) store.Deployment {
	t.Helper()
	d, err := b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{EnvironmentID: envID, Revision: 1, Origin: store.OriginBuild, Actor: "system"})
	must(t, err)
	from := store.StateRequested
	for _, to := range path {
		d, err = b.st.TransitionDeployment(b.ctx, team, d.ID, []store.DeploymentState{from}, to)
		must(t, err)
		if to == store.StateCapturing {
			_, err = b.st.RecordCapture(b.ctx, team, d.ID, store.Capture{Manifest: []byte(`{"a":1}`), Rendered: []byte(`{"r":1}`), Variables: []byte(`{"v":1}`)})
			must(t, err)
		}
		from = to
	}
	return d
}
