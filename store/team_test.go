package store_test

import (
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func TestStore_Team(t *testing.T) {
	t.Parallel()
	b := setup(t)

	got, err := b.st.GetTeam(b.ctx, b.a.team.ID)
	must(t, err)
	if got.Name != "alpha" || got.Slug != "alpha" {
		t.Fatalf("GetTeam = %+v", got)
	}
	bySlug, err := b.st.GetTeamBySlug(b.ctx, "beta")
	must(t, err)
	if bySlug.ID != b.b.team.ID {
		t.Fatalf("GetTeamBySlug(beta) = %s, want %s", bySlug.ID, b.b.team.ID)
	}
	renamed, err := b.st.RenameTeam(b.ctx, b.a.team.ID, "Alpha Inc")
	must(t, err)
	if renamed.Name != "Alpha Inc" {
		t.Fatalf("RenameTeam = %+v", renamed)
	}

	_, err = b.st.CreateTeam(b.ctx, "other", "alpha")
	wantConflict(t, err, "slug", "team_slug_taken")
	_, err = b.st.CreateTeam(b.ctx, "bad", "Not A Slug")
	wantErr(t, err, store.ErrInvalid)

	_, err = b.st.GetTeam(b.ctx, "team_missing")
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, b.st.DeleteTeam(b.ctx, "team_missing"), store.ErrNotFound)

	// Deleting a team takes everything it owns with it, and nothing else.
	must(t, b.st.DeleteTeam(b.ctx, b.b.team.ID))
	_, err = b.st.GetApplication(b.ctx, b.b.team.ID, b.b.app.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = b.st.GetApplication(b.ctx, b.a.team.ID, b.a.app.ID)
	must(t, err)
}

func TestStore_User(t *testing.T) {
	t.Parallel()
	b := setup(t)

	u, err := b.st.GetUserByEmail(b.ctx, "ALPHA@Example.com")
	must(t, err)
	if u.ID != b.a.owner.ID {
		t.Fatalf("GetUserByEmail is case-sensitive: got %s", u.ID)
	}
	_, err = b.st.CreateUser(b.ctx, "Alpha@EXAMPLE.com", "dup", "hash")
	wantConflict(t, err, "email", "email_taken")

	must(t, b.st.UpdateUserName(b.ctx, u.ID, "Alice"))
	must(t, b.st.UpdateUserPassword(b.ctx, u.ID, "newhash"))
	u, err = b.st.GetUser(b.ctx, u.ID)
	must(t, err)
	if u.Name != "Alice" || u.PasswordHash != "newhash" {
		t.Fatalf("user after updates = %+v", u)
	}
	wantErr(t, b.st.UpdateUserName(b.ctx, "usr_missing", "x"), store.ErrNotFound)
	_, err = b.st.GetUserByEmail(b.ctx, "nobody@example.com")
	wantErr(t, err, store.ErrNotFound)

	n, err := b.st.CountUsers(b.ctx)
	must(t, err)
	if n < 2 {
		t.Fatalf("CountUsers = %d, want at least 2", n)
	}
	must(t, b.st.WithTx(b.ctx, func(tx *store.Store) error { return tx.LockFirstRun(b.ctx) }))
}

func TestStore_Membership(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dev, err := b.st.CreateUser(b.ctx, "dev@example.com", "Dev", "hash")
	must(t, err)
	must(t, b.st.AddMember(b.ctx, b.a.team.ID, dev.ID, store.RoleDeveloper))
	// The same person in a second team.
	must(t, b.st.AddMember(b.ctx, b.b.team.ID, dev.ID, store.RoleViewer))
	wantConflict(t, b.st.AddMember(b.ctx, b.a.team.ID, dev.ID, store.RoleViewer), "user_id", "already_member")
	wantErr(t, b.st.AddMember(b.ctx, b.a.team.ID, dev.ID, "superuser"), store.ErrInvalid)

	members, err := b.st.ListMembers(b.ctx, b.a.team.ID)
	must(t, err)
	if len(members) != 2 || members[0].Email != "alpha@example.com" || members[1].Role != store.RoleDeveloper {
		t.Fatalf("ListMembers = %+v", members)
	}
	teams, err := b.st.ListUserTeams(b.ctx, dev.ID)
	must(t, err)
	if len(teams) != 2 || teams[0].Team.ID != b.a.team.ID || teams[1].Role != store.RoleViewer {
		t.Fatalf("ListUserTeams = %+v", teams)
	}

	must(t, b.st.UpdateMemberRole(b.ctx, b.a.team.ID, dev.ID, store.RoleAdmin))
	m, err := b.st.GetMember(b.ctx, b.a.team.ID, dev.ID)
	must(t, err)
	if m.Role != store.RoleAdmin {
		t.Fatalf("role = %s, want admin", m.Role)
	}

	tests := []struct {
		name string
		run  func() error
		want error
	}{
		{"demote last owner", func() error {
			return b.st.UpdateMemberRole(b.ctx, b.a.team.ID, b.a.owner.ID, store.RoleAdmin)
		}, store.ErrLastOwner},
		{"remove last owner", func() error { return b.st.RemoveMember(b.ctx, b.a.team.ID, b.a.owner.ID) }, store.ErrLastOwner},
		{"remove non-member", func() error { return b.st.RemoveMember(b.ctx, b.a.team.ID, "usr_missing") }, store.ErrNotFound},
		{"owner stays owner", func() error {
			return b.st.UpdateMemberRole(b.ctx, b.a.team.ID, b.a.owner.ID, store.RoleOwner)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if tt.want == nil {
				must(t, err)
				return
			}
			wantErr(t, err, tt.want)
		})
	}

	// With a second owner the first may step down.
	must(t, b.st.UpdateMemberRole(b.ctx, b.a.team.ID, dev.ID, store.RoleOwner))
	must(t, b.st.RemoveMember(b.ctx, b.a.team.ID, b.a.owner.ID))
	_, err = b.st.GetMember(b.ctx, b.a.team.ID, b.a.owner.ID)
	wantErr(t, err, store.ErrNotFound)
}

func TestRole_Valid(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		role store.Role
		want bool
	}{{store.RoleOwner, true}, {store.RoleViewer, true}, {"root", false}, {"", false}} {
		if got := tt.role.Valid(); got != tt.want {
			t.Errorf("Role(%q).Valid() = %v, want %v", tt.role, got, tt.want)
		}
	}
}
