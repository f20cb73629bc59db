package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// changeListener listens on a channel for a test: next returns the next
// notification's payload.
type changeListener struct {
	t        *testing.T
	channel  string
	payloads chan string
}

func listenChanges(t *testing.T, st *store.Store, channel string) *changeListener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan struct{})
	l := &changeListener{t: t, channel: channel, payloads: make(chan string, 100)}
	done := make(chan error, 1)
	go func() {
		done <- st.Listen(ctx, channel, func() { close(listening) }, func(p string) { l.payloads <- p })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Listen after cancel: %v", err)
		}
	})
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("Listen: %v", err)
	}
	return l
}

func (l *changeListener) next(what string) string {
	l.t.Helper()
	select {
	case p := <-l.payloads:
		return p
	case <-time.After(30 * time.Second):
		l.t.Fatalf("%s: no notification on %s", what, l.channel)
		return ""
	}
}

// TestAuthChanges_NotifyWhatChangesAnAnswer makes each change that could
// change what a cookie or token resolves to, and each activity stamp that
// could not, each followed by a marker notification. Notifications arrive
// in commit order, so a change notified when its notification comes before
// the marker's.
func TestAuthChanges_NotifyWhatChangesAnAnswer(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewSchema(t)
	l := listenChanges(t, st, store.AuthChannel)
	tn := storetest.NewTenant(t, st, "acme", "web")
	marker := func() {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, `SELECT pg_notify($1, 'marker')`, store.AuthChannel); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, notifies bool, change func() error) {
		t.Helper()
		if err := change(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		marker()
		got := l.next(what)
		switch {
		case notifies && got == "marker":
			t.Errorf("%s did not notify", what)
		case !notifies && got != "marker":
			t.Errorf("%s notified (%q); it cannot change what a cookie or token resolves to", what, got)
		}
		for got != "marker" {
			got = l.next(what)
		}
	}
	var user store.User
	check("creating a user", false, func() (err error) {
		user, err = st.CreateUser(ctx, "ann@example.com", "Ann", "hash")
		return err
	})
	check("adding a member", true, func() error { return st.AddMember(ctx, tn.Team.ID, user.ID, store.RoleDeveloper) })
	now := time.Now()
	sessionID := make([]byte, 32)
	sessionID[0] = 1
	check("signing in", false, func() error {
		_, err := st.CreateSession(ctx, store.Session{ID: sessionID, UserID: user.ID, CurrentTeamID: tn.Team.ID,
			CSRFSecret: make([]byte, 32), ExpiresAt: now.Add(time.Hour)})
		return err
	})
	check("touching a session (later expiry)", false, func() error { return st.TouchSession(ctx, sessionID, now.Add(2*time.Hour)) })
	check("shortening a session", true, func() error {
		_, err := st.Pool().Exec(ctx, `UPDATE sessions SET expires_at = expires_at - interval '1 minute' WHERE id = $1`, sessionID)
		return err
	})
	token, err := st.CreateAPIToken(ctx, tn.Team.ID, store.APITokenParams{Name: "ci", TokenHash: make([]byte, 32), Scopes: []string{"apps:read"}, CreatedBy: user.ID})
	if err != nil {
		t.Fatal(err)
	}
	check("using a token", false, func() error { return st.NoteAPITokenUse(ctx, &token, now) })
	check("changing a role", true, func() error { return st.UpdateMemberRole(ctx, tn.Team.ID, user.ID, store.RoleViewer) })
	check("renaming a user", true, func() error { return st.UpdateUserName(ctx, user.ID, "Ann B") })
	check("changing a password", true, func() error { return st.UpdateUserPassword(ctx, user.ID, "hash2") })
	check("revoking a token", true, func() error { return st.RevokeAPIToken(ctx, tn.Team.ID, token.ID, now) })
	check("switching team", true, func() error {
		other := storetest.NewTenant(t, st, "other", "api")
		if err := st.AddMember(ctx, other.Team.ID, user.ID, store.RoleOwner); err != nil {
			return err
		}
		marker()
		for l.next("adding to a second team") != "marker" {
		}
		return st.SetSessionTeam(ctx, sessionID, other.Team.ID)
	})
	check("removing a member", true, func() error { return st.RemoveMember(ctx, tn.Team.ID, user.ID) })
	check("signing out", true, func() error { return st.DeleteSession(ctx, sessionID) })
	check("deleting a team", true, func() error { return st.DeleteTeam(ctx, tn.Team.ID) })
	check("truncating sessions", true, func() error {
		_, err := st.Pool().Exec(ctx, `TRUNCATE sessions`)
		return err
	})
}
