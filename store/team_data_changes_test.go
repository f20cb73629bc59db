package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestTeamDataChanges_NotifyTheTeam changes each table the dashboard's
// applications list and Overview read, through the store as Slipway does,
// each change followed by a marker: the change must notify its team's id
// (or an empty payload, for every team) before the marker.
func TestTeamDataChanges_NotifyTheTeam(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewSchema(t)
	l := listenChanges(t, st, store.TeamDataChannel)
	var tn storetest.Tenant
	check := func(what string, notifies bool, change func() error) {
		t.Helper()
		if err := change(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if _, err := st.Pool().Exec(ctx, `SELECT pg_notify($1, 'marker')`, store.TeamDataChannel); err != nil {
			t.Fatal(err)
		}
		got := l.next(what)
		switch {
		case notifies && got == "marker":
			t.Errorf("%s did not notify", what)
		case notifies && got != tn.Team.ID && got != "":
			t.Errorf("%s notified %q, want team %s", what, got, tn.Team.ID)
		case !notifies && got != "marker":
			t.Errorf("%s notified (%q); neither page shows it", what, got)
		}
		for got != "marker" {
			got = l.next(what)
		}
	}
	check("creating a team, an application and an environment", true, func() error {
		tn = storetest.NewTenant(t, st, "acme", "web")
		return nil
	})
	var user store.User
	check("creating a user", false, func() (err error) {
		user, err = st.CreateUser(ctx, "ann@example.com", "Ann", "hash")
		return err
	})
	check("adding a member", true, func() error { return st.AddMember(ctx, tn.Team.ID, user.ID, store.RoleDeveloper) })
	check("renaming a user", true, func() error { return st.UpdateUserName(ctx, user.ID, "Ann B") })
	var d store.Deployment
	check("requesting a deployment", true, func() (err error) {
		d, err = st.CreateDeployment(ctx, tn.Team.ID, store.DeploymentParams{EnvironmentID: tn.Env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "user:" + user.ID})
		return err
	})
	check("recording a fetch", true, func() error {
		_, err := st.RecordDeploymentFetch(ctx, tn.Team.ID, store.DeploymentFetch{DeploymentID: d.ID, EnvironmentID: tn.Env.ID,
			RepositoryURL: "https://example.com/r.git", Branch: "main", Commit: "0123456789abcdef0123456789abcdef01234567", ManifestPath: "slipway.toml", Manifest: []byte("x")}, nil)
		return err
	})
	check("recording a git ref", true, func() error {
		return st.SetDeploymentRef(ctx, tn.Team.ID, d.ID, store.GitRef{Branch: "main", Commit: "0123456789abcdef0123456789abcdef01234567"})
	})
	check("recording a snapshot", true, func() error {
		return st.RecordDeploymentSnapshot(ctx, tn.Team.ID, store.DeploymentSnapshot{DeploymentID: d.ID, Commit: "0123456789abcdef0123456789abcdef01234567", Bundle: []byte("b")})
	})
	check("deploying routes", true, func() error {
		return st.SetEnvironmentRoutes(ctx, tn.Team.ID, tn.Env.ID, []store.DeployedRoute{{TeamID: tn.Team.ID, ApplicationID: tn.App.ID, EnvironmentID: tn.Env.ID,
			DeploymentID: d.ID, Hostname: "web.example.com", Visibility: "public", Service: "web", BackendService: "web", BackendPort: 8080}})
	})
	check("reporting a certificate", true, func() error {
		return st.ReportRouteCertificates(ctx, []store.RouteCertificate{{Hostname: "web.example.com", State: "issued", UpdatedAt: time.Now(), ReportedAt: time.Now()}})
	})
	var tokenHash = store.HashToken("slw_x")
	var token store.APIToken
	check("creating a token", true, func() (err error) {
		token, err = st.CreateAPIToken(ctx, tn.Team.ID, store.APITokenParams{Name: "ci", TokenHash: tokenHash, Scopes: []string{"apps:read"}, CreatedBy: user.ID})
		return err
	})
	check("using a token", false, func() error { return st.NoteAPITokenUse(ctx, &token, time.Now()) })
	check("installing GitHub", true, func() error {
		if _, err := st.UpsertGitHubInstallation(ctx, 42, "acme", "Organization"); err != nil {
			return err
		}
		_, err := st.BindGitHubInstallation(ctx, tn.Team.ID, 42, user.ID)
		return err
	})
	check("removing a member", true, func() error { return st.RemoveMember(ctx, tn.Team.ID, user.ID) })
}
