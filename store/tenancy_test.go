package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// TestStore_TeamScoped calls every team-scoped method with team A's id on
// team B's objects: each must act as if the object did not exist. A new
// team-scoped method belongs in this table.
func TestStore_TeamScoped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st, a, other := b.ctx, b.st, b.a.team.ID, b.b

	// Give team B one of everything.
	_, invHash := secret(t)
	inv, err := st.CreateInvitation(ctx, other.team.ID, store.InvitationParams{
		Email: "x@example.com", Role: store.RoleViewer, TokenHash: invHash, ExpiresAt: time.Now().Add(hour),
	})
	must(t, err)
	_, tokHash := secret(t)
	tok, err := st.CreateAPIToken(ctx, other.team.ID, store.APITokenParams{Name: "b", TokenHash: tokHash})
	must(t, err)
	_, err = st.CreateManifestRevision(ctx, other.team.ID, other.app.ID, store.RevisionParams{Manifest: json.RawMessage(`{}`)})
	must(t, err)
	dep, err := st.CreateDeployment(ctx, other.team.ID, store.DeploymentParams{EnvironmentID: other.env.ID, Origin: store.OriginBuild})
	must(t, err)
	must(t, st.SetEnvironmentHostnames(ctx, other.team.ID, other.env.ID, []string{"beta.example.com"}))
	_, err = st.RecordEvent(ctx, other.team.ID, store.EventParams{Actor: "system", Verb: "x", ObjectType: "application", ObjectID: other.app.ID})
	must(t, err)

	notFound := []struct {
		name string
		call func() error
	}{
		{"GetMember", func() error { _, err := st.GetMember(ctx, a, other.owner.ID); return err }},
		{"UpdateMemberRole", func() error { return st.UpdateMemberRole(ctx, a, other.owner.ID, store.RoleViewer) }},
		{"RemoveMember", func() error { return st.RemoveMember(ctx, a, other.owner.ID) }},
		{"GetInvitation", func() error { _, err := st.GetInvitation(ctx, a, inv.ID); return err }},
		{"DeleteInvitation", func() error { return st.DeleteInvitation(ctx, a, inv.ID) }},
		{"GetAPIToken", func() error { _, err := st.GetAPIToken(ctx, a, tok.ID); return err }},
		{"RevokeAPIToken", func() error { return st.RevokeAPIToken(ctx, a, tok.ID, time.Now()) }},
		{"GetApplication", func() error { _, err := st.GetApplication(ctx, a, other.app.ID); return err }},
		{"DeleteApplication", func() error { return st.DeleteApplication(ctx, a, other.app.ID) }},
		{"PurgeApplication", func() error { return st.PurgeApplication(ctx, a, other.app.ID) }},
		{"CreateManifestRevision", func() error {
			_, err := st.CreateManifestRevision(ctx, a, other.app.ID, store.RevisionParams{Manifest: json.RawMessage(`{}`)})
			return err
		}},
		{"GetManifestRevision", func() error { _, err := st.GetManifestRevision(ctx, a, other.app.ID, 1); return err }},
		{"GetCurrentManifestRevision", func() error { _, err := st.GetCurrentManifestRevision(ctx, a, other.app.ID); return err }},
		{"CreateEnvironment", func() error {
			_, err := st.CreateEnvironment(ctx, a, store.EnvironmentParams{
				ApplicationID: other.app.ID, Kind: store.KindEnvironment, Name: "sneaky", Slug: "sneaky",
			})
			return err
		}},
		{"GetEnvironment", func() error { _, err := st.GetEnvironment(ctx, a, other.env.ID); return err }},
		{"GetEnvironmentByName", func() error {
			_, err := st.GetEnvironmentByName(ctx, a, other.app.ID, "production")
			return err
		}},
		{"UpdateEnvironment", func() error {
			_, err := st.UpdateEnvironment(ctx, a, other.env.ID, store.EnvironmentUpdate{Sync: ptr(true)})
			return err
		}},
		{"DeleteEnvironment", func() error { return st.DeleteEnvironment(ctx, a, other.env.ID) }},
		{"CreateDeployment", func() error {
			_, err := st.CreateDeployment(ctx, a, store.DeploymentParams{EnvironmentID: other.env.ID, Origin: store.OriginBuild})
			return err
		}},
		{"GetDeployment", func() error { _, err := st.GetDeployment(ctx, a, dep.ID); return err }},
		{"TransitionDeployment", func() error {
			_, err := st.TransitionDeployment(ctx, a, dep.ID, []store.DeploymentState{store.StateRequested}, store.StateCapturing)
			return err
		}},
		{"FailDeployment", func() error { _, err := st.FailDeployment(ctx, a, dep.ID, "x", "y"); return err }},
		{"RecordCapture", func() error { _, err := st.RecordCapture(ctx, a, dep.ID, store.Capture{}); return err }},
		{"SetDeploymentSteps", func() error { return st.SetDeploymentSteps(ctx, a, dep.ID, json.RawMessage(`[]`)) }},
		{"LatestSucceededDeployment", func() error { _, err := st.LatestSucceededDeployment(ctx, a, other.env.ID); return err }},
		{"SetEnvironmentHostnames", func() error { return st.SetEnvironmentHostnames(ctx, a, other.env.ID, nil) }},
	}
	for _, tt := range notFound {
		t.Run(tt.name, func(t *testing.T) { wantErr(t, tt.call(), store.ErrNotFound) })
	}

	empty := []struct {
		name string
		n    func() (int, error)
	}{
		{"ListMembers", func() (int, error) { ms, err := st.ListMembers(ctx, a); return len(ms) - 1, err }}, // a's own owner
		{"ListPendingInvitations", func() (int, error) { is, err := st.ListPendingInvitations(ctx, a); return len(is), err }},
		{"ListAPITokens", func() (int, error) { ts, err := st.ListAPITokens(ctx, a); return len(ts), err }},
		{"ListManifestRevisions", func() (int, error) {
			rs, err := st.ListManifestRevisions(ctx, a, other.app.ID)
			return len(rs), err
		}},
		{"ListEnvironments", func() (int, error) { es, err := st.ListEnvironments(ctx, a, other.app.ID); return len(es), err }},
		{"ListDeployments(env)", func() (int, error) {
			ds, err := st.ListDeployments(ctx, a, store.DeploymentFilter{EnvironmentID: other.env.ID})
			return len(ds), err
		}},
		{"ListDeployments(all)", func() (int, error) { ds, err := st.ListDeployments(ctx, a, store.DeploymentFilter{}); return len(ds), err }},
		{"ListHostnames", func() (int, error) { hs, err := st.ListHostnames(ctx, a, other.env.ID); return len(hs), err }},
		{"ReleaseHostnames", func() (int, error) { n, err := st.ReleaseHostnames(ctx, a, other.env.ID); return int(n), err }},
		{"ListEvents", func() (int, error) {
			es, err := st.ListEvents(ctx, a, store.EventFilter{ObjectID: other.app.ID})
			return len(es), err
		}},
		{"ListApplications", func() (int, error) {
			as, err := st.ListApplications(ctx, a)
			for _, app := range as {
				if app.ID == other.app.ID {
					return 1, err
				}
			}
			return 0, err
		}},
	}
	for _, tt := range empty {
		t.Run(tt.name, func(t *testing.T) {
			n, err := tt.n()
			must(t, err)
			if n != 0 {
				t.Fatalf("%s saw %d of team B's rows", tt.name, n)
			}
		})
	}

	// Team B's objects survived every attempt untouched.
	d, err := st.GetDeployment(ctx, other.team.ID, dep.ID)
	must(t, err)
	if d.State != store.StateRequested {
		t.Fatalf("team B's deployment is %s", d.State)
	}
	hs, err := st.ListHostnames(ctx, other.team.ID, other.env.ID)
	must(t, err)
	if len(hs) != 1 {
		t.Fatalf("team B's hostnames = %+v", hs)
	}
	if _, err := st.GetAPIToken(ctx, other.team.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := st.GetAPIToken(ctx, other.team.ID, tok.ID); err != nil || got.RevokedAt != nil {
		t.Fatalf("team B's token revoked: %v %v", got.RevokedAt, err)
	}
}
