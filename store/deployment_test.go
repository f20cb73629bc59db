package store_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func TestStore_Environment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	app := b.a.app

	staging, err := b.st.CreateEnvironment(b.ctx, b.a.team.ID, store.EnvironmentParams{
		ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "notes-staging",
		Branch: "main", Sync: true, Variables: json.RawMessage(`{"domain":"staging.example.com"}`),
	})
	must(t, err)
	preview, err := b.st.CreateEnvironment(b.ctx, b.a.team.ID, store.EnvironmentParams{
		ApplicationID: app.ID, Kind: store.KindPreview, Name: "feat-login", Slug: "notes-feat-login-3fa2c1", Branch: "feat/login",
	})
	must(t, err)

	tests := []struct {
		name  string
		p     store.EnvironmentParams
		field string
		code  string
		want  error
	}{
		{"name taken", store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "x1"}, "name", "environment_name_taken", nil},
		{"slug taken", store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "qa", Slug: "notes-staging"}, "slug", "environment_slug_taken", nil},
		{"second preview of a branch", store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindPreview, Name: "p2", Slug: "p2", Branch: "feat/login"}, "branch", "preview_exists", nil},
		{"preview without branch", store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindPreview, Name: "p3", Slug: "p3"}, "", "", store.ErrInvalid},
		{"bad kind", store.EnvironmentParams{ApplicationID: app.ID, Kind: "cluster", Name: "p4", Slug: "p4"}, "", "", store.ErrInvalid},
		{"unknown application", store.EnvironmentParams{ApplicationID: "app_missing", Kind: store.KindEnvironment, Name: "p5", Slug: "p5"}, "", "", store.ErrNotFound},
		{"promote from another application", store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "p6", Slug: "p6", PromoteFrom: b.b.env.ID}, "", "", store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.st.CreateEnvironment(b.ctx, b.a.team.ID, tt.p)
			if tt.want != nil {
				wantErr(t, err, tt.want)
				return
			}
			wantConflict(t, err, tt.field, tt.code)
		})
	}

	got, err := b.st.GetPreview(b.ctx, b.a.team.ID, app.ID, "feat/login", "")
	must(t, err)
	if got.ID != preview.ID || got.Kind != store.KindPreview {
		t.Fatalf("GetPreview = %+v", got)
	}
	list, err := b.st.ListEnvironments(b.ctx, b.a.team.ID, app.ID)
	must(t, err)
	if len(list) != 3 || list[0].Name != "production" || list[2].Kind != store.KindPreview {
		t.Fatalf("ListEnvironments = %+v", list)
	}

	upd, err := b.st.UpdateEnvironment(b.ctx, b.a.team.ID, b.a.env.ID, store.EnvironmentUpdate{
		PromoteFrom: &staging.ID, Rollback: ptr("automatic"), Variables: json.RawMessage(`{"replicas":3}`),
	})
	must(t, err)
	if upd.PromoteFrom != staging.ID || upd.Rollback != "automatic" || string(upd.Variables) != `{"replicas": 3}` || upd.Name != "production" {
		t.Fatalf("UpdateEnvironment = %+v (variables %s)", upd, upd.Variables)
	}
	// Deleting the source environment clears promote_from.
	must(t, b.st.DeleteEnvironment(b.ctx, b.a.team.ID, staging.ID))
	upd, err = b.st.GetEnvironmentByName(b.ctx, b.a.team.ID, app.ID, "production")
	must(t, err)
	if upd.PromoteFrom != "" {
		t.Fatalf("promote_from after source deleted = %q", upd.PromoteFrom)
	}
	upd, err = b.st.UpdateEnvironment(b.ctx, b.a.team.ID, b.a.env.ID, store.EnvironmentUpdate{Rollback: ptr("")})
	must(t, err)
	if upd.Rollback != "" || string(upd.Variables) != `{"replicas": 3}` {
		t.Fatalf("partial update touched other fields: %+v", upd)
	}
	_, err = b.st.UpdateEnvironment(b.ctx, b.a.team.ID, b.a.env.ID, store.EnvironmentUpdate{Visibility: ptr("secret")})
	wantErr(t, err, store.ErrInvalid)
}

func TestStore_Deployment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	team, env := b.a.team.ID, b.a.env.ID
	request := func(t *testing.T) store.Deployment {
		t.Helper()
		d, err := b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{
			EnvironmentID: env, Revision: 1, Origin: store.OriginBuild, Actor: "user:" + b.a.owner.ID,
		})
		must(t, err)
		return d
	}

	first := request(t)
	if first.State != store.StateRequested || first.ApplicationID != b.a.app.ID || string(first.Steps) != "[]" {
		t.Fatalf("CreateDeployment = %+v", first)
	}
	// A newer request supersedes the queued one.
	second := request(t)
	first, err := b.st.GetDeployment(b.ctx, team, first.ID)
	must(t, err)
	if first.State != store.StateSuperseded || first.FinishedAt == nil {
		t.Fatalf("queued deployment after a newer request = %s", first.State)
	}
	// The superseded one can no longer start.
	_, err = b.st.TransitionDeployment(b.ctx, team, first.ID, []store.DeploymentState{store.StateRequested}, store.StateCapturing)
	var te *store.TransitionError
	if !errors.As(err, &te) || te.Current != store.StateSuperseded {
		t.Fatalf("starting a superseded deployment = %v", err)
	}

	d, err := b.st.TransitionDeployment(b.ctx, team, second.ID, []store.DeploymentState{store.StateRequested}, store.StateCapturing)
	must(t, err)
	if d.StartedAt == nil || d.FinishedAt != nil {
		t.Fatalf("capturing deployment times = %v %v", d.StartedAt, d.FinishedAt)
	}
	d, err = b.st.RecordCapture(b.ctx, team, d.ID, store.Capture{
		Manifest: json.RawMessage(`{"a":1}`), Rendered: json.RawMessage(`{"a":2}`), Variables: json.RawMessage(`{}`),
	})
	must(t, err)
	if string(d.RenderedManifest) != `{"a": 2}` {
		t.Fatalf("rendered = %s", d.RenderedManifest)
	}
	_, err = b.st.RecordCapture(b.ctx, team, d.ID, store.Capture{Manifest: json.RawMessage(`{}`)})
	wantErr(t, err, store.ErrAlreadyCaptured)

	// While one runs, the next request waits in requested and cannot start.
	third := request(t)
	_, err = b.st.TransitionDeployment(b.ctx, team, third.ID, []store.DeploymentState{store.StateRequested}, store.StateCapturing)
	wantConflict(t, err, "environment_id", "deployment_in_progress")

	steps := []store.DeploymentState{store.StatePreparing, store.StateRunningJobs, store.StateRollingOut, store.StateSucceeded}
	for _, to := range steps {
		d, err = b.st.TransitionDeployment(b.ctx, team, d.ID, []store.DeploymentState{d.State}, to)
		must(t, err)
	}
	must(t, b.st.SetDeploymentSteps(b.ctx, team, third.ID, json.RawMessage(`[{"step":"capture"}]`)))
	wantErr(t, b.st.SetDeploymentSteps(b.ctx, team, d.ID, json.RawMessage(`[]`)), store.ErrInvalidTransition)
	if d.FinishedAt == nil {
		t.Fatal("succeeded deployment has no finished_at")
	}
	latest, err := b.st.LatestSucceededDeployment(b.ctx, team, env)
	must(t, err)
	if latest.ID != d.ID {
		t.Fatalf("LatestSucceededDeployment = %s, want %s", latest.ID, d.ID)
	}

	// Now the waiting one may start, and fail.
	_, err = b.st.TransitionDeployment(b.ctx, team, third.ID, []store.DeploymentState{store.StateRequested}, store.StateCapturing)
	must(t, err)
	failed, err := b.st.FailDeployment(b.ctx, team, third.ID, "image_pull_failed", "no such image")
	must(t, err)
	if failed.State != store.StateFailed || failed.ErrorCode != "image_pull_failed" || failed.FinishedAt == nil {
		t.Fatalf("FailDeployment = %+v", failed)
	}
	_, err = b.st.FailDeployment(b.ctx, team, third.ID, "again", "")
	wantErr(t, err, store.ErrInvalidTransition)

	rollback, err := b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{
		EnvironmentID: env, Origin: store.OriginRollback, RestoredFrom: d.ID, Actor: "system",
	})
	must(t, err)
	if rollback.RestoredFrom != d.ID {
		t.Fatalf("RestoredFrom = %q", rollback.RestoredFrom)
	}

	list, err := b.st.ListDeployments(b.ctx, team, store.DeploymentFilter{EnvironmentID: env})
	must(t, err)
	if len(list) != 4 || list[0].ID != rollback.ID {
		t.Fatalf("ListDeployments = %d, first %s", len(list), list[0].ID)
	}
	live, err := b.st.ListDeployments(b.ctx, team, store.DeploymentFilter{States: []store.DeploymentState{store.StateRequested}})
	must(t, err)
	if len(live) != 1 || live[0].ID != rollback.ID {
		t.Fatalf("ListDeployments(requested) = %+v", live)
	}

	_, err = b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{EnvironmentID: env, Origin: "magic"})
	wantErr(t, err, store.ErrInvalid)
	_, err = b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{EnvironmentID: "env_missing", Origin: store.OriginBuild})
	wantErr(t, err, store.ErrNotFound)
}

func TestDeploymentState_CanMoveTo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, to store.DeploymentState
		want     bool
	}{
		{store.StateRequested, store.StateCapturing, true},
		{store.StateRequested, store.StateSuperseded, true},
		{store.StateRequested, store.StateRollingOut, false},
		{store.StateCapturing, store.StateSuperseded, false},
		{store.StatePreparing, store.StateRollingOut, true},
		{store.StateRollingOut, store.StateSucceeded, true},
		{store.StateSucceeded, store.StateFailed, false},
		{store.StateFailed, store.StateRequested, false},
		{store.StateCancelled, store.StateCapturing, false},
	}
	for _, tt := range tests {
		if got := tt.from.CanMoveTo(tt.to); got != tt.want {
			t.Errorf("%s -> %s = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	// The store refuses a transition the machine forbids before asking Postgres.
	b := setup(t)
	_, err := b.st.TransitionDeployment(b.ctx, b.a.team.ID, "dep_any", []store.DeploymentState{store.StateSucceeded}, store.StateRequested)
	wantErr(t, err, store.ErrInvalidTransition)
}

func TestStore_Hostnames(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staging, err := b.st.CreateEnvironment(b.ctx, b.a.team.ID, store.EnvironmentParams{
		ApplicationID: b.a.app.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "notes-staging",
	})
	must(t, err)

	must(t, b.st.SetEnvironmentHostnames(b.ctx, b.a.team.ID, b.a.env.ID, []string{"Notes.Example.com.", "*.tenants.example.com", "shop.example.com"}))
	// A hostname routed before the wildcard is the other application's to keep.
	must(t, b.st.SetEnvironmentHostnames(b.ctx, b.b.team.ID, b.b.env.ID, []string{"old.example.com"}))

	tests := []struct {
		name  string
		team  string
		env   string
		hosts []string
		want  string // conflicting hostname, "" for success
	}{
		{"other team, same hostname", b.b.team.ID, b.b.env.ID, []string{"notes.example.com"}, "notes.example.com"},
		{"other environment of the same app", b.a.team.ID, staging.ID, []string{"shop.example.com"}, "shop.example.com"},
		{"below another application's wildcard", b.b.team.ID, b.b.env.ID, []string{"acme.tenants.example.com"}, "acme.tenants.example.com"},
		{"same wildcard", b.b.team.ID, b.b.env.ID, []string{"*.tenants.example.com"}, "*.tenants.example.com"},
		{"below own application's wildcard", b.a.team.ID, staging.ID, []string{"acme.tenants.example.com"}, ""},
		{"unrelated", b.b.team.ID, b.b.env.ID, []string{"old.example.com", "beta.example.org"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := b.st.SetEnvironmentHostnames(b.ctx, tt.team, tt.env, tt.hosts)
			if tt.want == "" {
				must(t, err)
				return
			}
			wantConflict(t, err, "hostname", "hostname_conflict")
			var ce *store.ConflictError
			errors.As(err, &ce)
			if ce.Value != tt.want {
				t.Fatalf("conflict on %q, want %q", ce.Value, tt.want)
			}
		})
	}
	// The failed attempts changed nothing; the set replaced the old one.
	hs, err := b.st.ListHostnames(b.ctx, b.b.team.ID, b.b.env.ID)
	must(t, err)
	if len(hs) != 2 || hs[0].Hostname != "beta.example.org" || hs[1].Hostname != "old.example.com" {
		t.Fatalf("beta hostnames = %+v", hs)
	}
	hs, err = b.st.ListHostnames(b.ctx, b.a.team.ID, b.a.env.ID)
	must(t, err)
	if len(hs) != 3 || hs[0].Hostname != "*.tenants.example.com" || !hs[0].Wildcard || hs[1].Hostname != "notes.example.com" {
		t.Fatalf("alpha hostnames = %+v", hs)
	}

	// Shrinking the set releases names for others.
	must(t, b.st.SetEnvironmentHostnames(b.ctx, b.a.team.ID, b.a.env.ID, []string{"notes.example.com"}))
	must(t, b.st.SetEnvironmentHostnames(b.ctx, b.b.team.ID, b.b.env.ID, []string{"shop.example.com"}))
	n, err := b.st.ReleaseHostnames(b.ctx, b.a.team.ID, b.a.env.ID)
	must(t, err)
	if n != 1 {
		t.Fatalf("ReleaseHostnames = %d, want 1", n)
	}
	wantErr(t, b.st.SetEnvironmentHostnames(b.ctx, b.a.team.ID, "env_missing", []string{"x.example.com"}), store.ErrNotFound)
}
