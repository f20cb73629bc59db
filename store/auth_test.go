package store_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

func TestStore_Session(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, id := secret(t)
	csrf := bytes.Repeat([]byte{7}, 32)

	sess, err := b.st.CreateSession(b.ctx, store.Session{
		ID: id, UserID: b.a.owner.ID, CurrentTeamID: b.a.team.ID, CSRFSecret: csrf, ExpiresAt: time.Now().Add(hour),
	})
	must(t, err)
	if sess.CurrentTeamID != b.a.team.ID || !bytes.Equal(sess.CSRFSecret, csrf) {
		t.Fatalf("CreateSession = %+v", sess)
	}
	in, err := b.st.GetSignedIn(b.ctx, id)
	must(t, err)
	if in.Session.UserID != b.a.owner.ID || in.User.ID != b.a.owner.ID || in.User.Email != b.a.owner.Email {
		t.Fatalf("GetSignedIn = %+v", in)
	}
	if len(in.Teams) != 1 || in.Teams[0].Team.ID != b.a.team.ID || in.Teams[0].Role != store.RoleOwner {
		t.Fatalf("GetSignedIn teams = %+v, want team A as owner", in.Teams)
	}

	// A user cannot switch into a team they are not a member of.
	wantErr(t, b.st.SetSessionTeam(b.ctx, id, b.b.team.ID), store.ErrNotFound)
	must(t, b.st.AddMember(b.ctx, b.b.team.ID, b.a.owner.ID, store.RoleViewer))
	must(t, b.st.SetSessionTeam(b.ctx, id, b.b.team.ID))
	in, err = b.st.GetSignedIn(b.ctx, id)
	must(t, err)
	if in.Session.CurrentTeamID != b.b.team.ID || len(in.Teams) != 2 || in.Teams[0].Team.Name > in.Teams[1].Team.Name {
		t.Fatalf("after joining team B: %+v, want both teams by name and B current", in)
	}
	// Leaving the team clears the session's current team, keeps the session.
	must(t, b.st.RemoveMember(b.ctx, b.b.team.ID, b.a.owner.ID))
	in, err = b.st.GetSignedIn(b.ctx, id)
	must(t, err)
	if in.Session.CurrentTeamID != "" || len(in.Teams) != 1 {
		t.Fatalf("current team after leaving = %q (teams %+v), want empty", in.Session.CurrentTeamID, in.Teams)
	}
	// Creating a session in a team the user is not in fails.
	_, otherID := secret(t)
	_, err = b.st.CreateSession(b.ctx, store.Session{
		ID: otherID, UserID: b.a.owner.ID, CurrentTeamID: b.b.team.ID, CSRFSecret: csrf, ExpiresAt: time.Now().Add(hour),
	})
	wantErr(t, err, store.ErrNotFound)

	must(t, b.st.TouchSession(b.ctx, id, time.Now().Add(2*hour)))

	// Expired sessions are invisible and cleaned up.
	_, expiredID := secret(t)
	_, err = b.st.CreateSession(b.ctx, store.Session{
		ID: expiredID, UserID: b.b.owner.ID, CSRFSecret: csrf, ExpiresAt: time.Now().Add(-time.Minute),
	})
	must(t, err)
	_, err = b.st.GetSignedIn(b.ctx, expiredID)
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, b.st.TouchSession(b.ctx, expiredID, time.Now().Add(hour)), store.ErrNotFound)
	n, err := b.st.DeleteExpiredSessions(b.ctx, time.Now())
	must(t, err)
	if n < 1 {
		t.Fatalf("DeleteExpiredSessions = %d, want at least 1", n)
	}
	_, err = b.st.GetSignedIn(b.ctx, id)
	must(t, err)

	// Ending every session but one.
	_, secondID := secret(t)
	_, err = b.st.CreateSession(b.ctx, store.Session{ID: secondID, UserID: b.a.owner.ID, CSRFSecret: csrf, ExpiresAt: time.Now().Add(hour)})
	must(t, err)
	n, err = b.st.DeleteUserSessions(b.ctx, b.a.owner.ID, id)
	must(t, err)
	if n != 1 {
		t.Fatalf("DeleteUserSessions = %d, want 1", n)
	}
	must(t, b.st.DeleteSession(b.ctx, id))
	must(t, b.st.DeleteSession(b.ctx, id)) // logging out twice is fine
	_, err = b.st.GetSignedIn(b.ctx, id)
	wantErr(t, err, store.ErrNotFound)
}

func TestStore_Invitation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	invitee, err := b.st.CreateUser(b.ctx, "new@example.com", "New", "hash")
	must(t, err)
	now := time.Now()

	inviteEmail := func(t *testing.T, email string, expires time.Time) []byte {
		t.Helper()
		_, hash := secret(t)
		_, err := b.st.CreateInvitation(b.ctx, b.a.team.ID, store.InvitationParams{
			Email: email, Role: store.RoleDeveloper, TokenHash: hash, InvitedBy: b.a.owner.ID, ExpiresAt: expires,
		})
		must(t, err)
		return hash
	}
	invite := func(t *testing.T, expires time.Time) []byte {
		t.Helper()
		return inviteEmail(t, "new@example.com", expires)
	}

	t.Run("accept once", func(t *testing.T) {
		hash := invite(t, now.Add(hour))
		pending, err := b.st.ListPendingInvitations(b.ctx, b.a.team.ID)
		must(t, err)
		if len(pending) == 0 {
			t.Fatal("no pending invitations")
		}
		inv, err := b.st.AcceptInvitation(b.ctx, hash, invitee.ID, now)
		must(t, err)
		if inv.AcceptedBy != invitee.ID || inv.AcceptedAt == nil {
			t.Fatalf("accepted invitation = %+v", inv)
		}
		m, err := b.st.GetMember(b.ctx, b.a.team.ID, invitee.ID)
		must(t, err)
		if m.Role != store.RoleDeveloper {
			t.Fatalf("role = %s", m.Role)
		}
		_, err = b.st.AcceptInvitation(b.ctx, hash, invitee.ID, now)
		wantErr(t, err, store.ErrInvitationUsed)
	})

	tests := []struct {
		name string
		hash func(t *testing.T) []byte
		want error
	}{
		{"expired", func(t *testing.T) []byte { return invite(t, now.Add(-time.Second)) }, store.ErrInvitationExpired},
		{"unknown", func(t *testing.T) []byte { _, h := secret(t); return h }, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hash := tt.hash(t)
			_, err := b.st.AcceptInvitation(b.ctx, hash, b.b.owner.ID, now)
			wantErr(t, err, tt.want)
			// Nothing was half-done: no membership appeared.
			_, err = b.st.GetMember(b.ctx, b.a.team.ID, b.b.owner.ID)
			wantErr(t, err, store.ErrNotFound)
		})
	}

	t.Run("bound to the invited address", func(t *testing.T) {
		hash := invite(t, now.Add(hour))
		// Another account holding the link cannot use it, and the attempt
		// neither consumes it nor adds a membership.
		_, err := b.st.AcceptInvitation(b.ctx, hash, b.b.owner.ID, now)
		wantErr(t, err, store.ErrInvitationEmailMismatch)
		_, err = b.st.GetMember(b.ctx, b.a.team.ID, b.b.owner.ID)
		wantErr(t, err, store.ErrNotFound)
		inv, err := b.st.GetInvitationByToken(b.ctx, hash)
		must(t, err)
		if inv.AcceptedAt != nil {
			t.Fatal("a refused acceptance consumed the invitation")
		}
		must(t, b.st.DeleteInvitation(b.ctx, b.a.team.ID, inv.ID))
	})

	t.Run("address compared ignoring case", func(t *testing.T) {
		other, err := b.st.CreateUser(b.ctx, "Mixed.Case@Example.com", "", "hash")
		must(t, err)
		hash := inviteEmail(t, "mixed.case@EXAMPLE.COM", now.Add(hour))
		_, err = b.st.AcceptInvitation(b.ctx, hash, other.ID, now)
		must(t, err)
	})

	t.Run("already a member", func(t *testing.T) {
		hash := inviteEmail(t, b.a.owner.Email, now.Add(hour))
		_, err := b.st.AcceptInvitation(b.ctx, hash, b.a.owner.ID, now)
		wantConflict(t, err, "user_id", "already_member")
		// The invitation was not consumed by the failed attempt.
		inv, err := b.st.GetInvitationByToken(b.ctx, hash)
		must(t, err)
		if inv.AcceptedAt != nil {
			t.Fatal("failed acceptance consumed the invitation")
		}
		must(t, b.st.DeleteInvitation(b.ctx, b.a.team.ID, inv.ID))
		_, err = b.st.GetInvitation(b.ctx, b.a.team.ID, inv.ID)
		wantErr(t, err, store.ErrNotFound)
	})
}

func TestStore_APIToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, hash := secret(t)
	now := time.Now()

	tok, err := b.st.CreateAPIToken(b.ctx, b.a.team.ID, store.APITokenParams{
		Name: "ci", TokenHash: hash, Scopes: []string{"apps:read", "apps:deploy"}, CreatedBy: b.a.owner.ID,
	})
	must(t, err)
	if len(tok.Scopes) != 2 || tok.LastUsedAt != nil {
		t.Fatalf("CreateAPIToken = %+v", tok)
	}
	auth, err := b.st.AuthenticateAPIToken(b.ctx, hash, now)
	must(t, err)
	if auth.ID != tok.ID || auth.TeamID != b.a.team.ID || auth.LastUsedAt == nil || auth.CreatorRole != store.RoleOwner {
		t.Fatalf("AuthenticateAPIToken = %+v", auth)
	}
	got, err := b.st.GetAPIToken(b.ctx, b.a.team.ID, tok.ID)
	must(t, err)
	if got.LastUsedAt == nil {
		t.Fatal("last_used_at not recorded")
	}
	list, err := b.st.ListAPITokens(b.ctx, b.a.team.ID)
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("ListAPITokens = %d tokens", len(list))
	}

	_, expiredHash := secret(t)
	_, err = b.st.CreateAPIToken(b.ctx, b.a.team.ID, store.APITokenParams{
		Name: "old", TokenHash: expiredHash, ExpiresAt: ptr(now.Add(-time.Minute)),
	})
	must(t, err)
	_, err = b.st.AuthenticateAPIToken(b.ctx, expiredHash, now)
	wantErr(t, err, store.ErrNotFound)

	must(t, b.st.RevokeAPIToken(b.ctx, b.a.team.ID, tok.ID, now))
	wantErr(t, b.st.RevokeAPIToken(b.ctx, b.a.team.ID, tok.ID, now), store.ErrNotFound)
	_, err = b.st.AuthenticateAPIToken(b.ctx, hash, now)
	wantErr(t, err, store.ErrNotFound)
	list, err = b.st.ListAPITokens(b.ctx, b.a.team.ID)
	must(t, err)
	if len(list) != 1 || list[0].Name != "old" {
		t.Fatalf("ListAPITokens after revoke = %+v", list)
	}

	_, err = b.st.CreateAPIToken(b.ctx, b.a.team.ID, store.APITokenParams{Name: "dup", TokenHash: hash})
	wantConflict(t, err, "token", "token_taken")
}
