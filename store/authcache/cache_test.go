package authcache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// signedIn is a user in a team with a session an hour long.
type signedIn struct {
	st      *store.Store
	user    store.User
	session []byte
}

func newSignedIn(t *testing.T) signedIn {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	tn := storetest.NewTenant(t, st, "acme", "web")
	u, err := st.CreateUser(ctx, "ann@example.com", "Ann", "hash")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddMember(ctx, tn.Team.ID, u.ID, store.RoleOwner); err != nil {
		t.Fatal(err)
	}
	id := store.HashToken("cookie")
	if _, err := st.CreateSession(ctx, store.Session{ID: id, UserID: u.ID, CurrentTeamID: tn.Team.ID,
		CSRFSecret: make([]byte, 32), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return signedIn{st: st, user: u, session: id}
}

// renameQuietly renames the user with the users trigger off: a change the
// cache is not told about.
func (s signedIn) renameQuietly(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	for _, sql := range []string{
		`ALTER TABLE users DISABLE TRIGGER users_auth_changed`,
		`UPDATE users SET name = '` + name + `'`,
		`ALTER TABLE users ENABLE TRIGGER users_auth_changed`,
	} {
		if _, err := s.st.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
}

func (s signedIn) name(t *testing.T, c *Cache) string {
	t.Helper()
	in, err := c.SignedIn(context.Background(), s.session, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return in.User.Name
}

func TestCache_NotListeningPassesThrough(t *testing.T) {
	s := newSignedIn(t)
	c := New(s.st, nil)
	if got := s.name(t, c); got != "Ann" {
		t.Fatalf("name %q", got)
	}
	s.renameQuietly(t, "Bea")
	if got := s.name(t, c); got != "Bea" {
		t.Errorf("a cache that is not listening answered %q from memory", got)
	}
}

func TestCache_AnswersUntilNotified(t *testing.T) {
	s := newSignedIn(t)
	c := New(s.st, nil)
	storetest.RunListening(t, c.Run, c.Listening)
	if got := s.name(t, c); got != "Ann" {
		t.Fatalf("name %q", got)
	}
	s.renameQuietly(t, "Bea")
	if got := s.name(t, c); got != "Ann" {
		t.Fatalf("a listening cache read Postgres again (%q)", got)
	}
	if _, err := s.st.Pool().Exec(context.Background(), `SELECT pg_notify($1, '')`, store.AuthChannel); err != nil {
		t.Fatal(err)
	}
	storetest.WaitFor(t, "the notification to drop the entry", func() bool { return s.name(t, c) == "Bea" })

	// Signing out notifies too: the cookie stops working.
	if err := s.st.DeleteSession(context.Background(), s.session); err != nil {
		t.Fatal(err)
	}
	storetest.WaitFor(t, "the signed-out session to be refused", func() bool {
		_, err := c.SignedIn(context.Background(), s.session, time.Now())
		return errors.Is(err, store.ErrNotFound)
	})
}

func TestCache_TokenUseIsStampedOnHits(t *testing.T) {
	s := newSignedIn(t)
	ctx := context.Background()
	in, err := s.st.GetSignedIn(ctx, s.session)
	if err != nil {
		t.Fatal(err)
	}
	hash := store.HashToken("slw_token")
	tok, err := s.st.CreateAPIToken(ctx, in.Teams[0].Team.ID, store.APITokenParams{Name: "ci", TokenHash: hash, Scopes: []string{"apps:read"}, CreatedBy: s.user.ID})
	if err != nil {
		t.Fatal(err)
	}
	c := New(s.st, nil)
	storetest.RunListening(t, c.Run, c.Listening)
	now := time.Now().Truncate(time.Second)
	if _, err := c.APIToken(ctx, hash, now); err != nil {
		t.Fatal(err)
	}
	later := now.Add(2 * time.Minute)
	got, err := c.APIToken(ctx, hash, later)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastUsedAt == nil || !got.LastUsedAt.Equal(later) {
		t.Errorf("answer's last use %v, want %v", got.LastUsedAt, later)
	}
	stored, err := s.st.GetAPIToken(ctx, tok.TeamID, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.LastUsedAt == nil || !stored.LastUsedAt.Equal(later) {
		t.Errorf("stored last use %v, want %v (a use answered from memory must still be recorded)", stored.LastUsedAt, later)
	}
}

func TestCache_TouchedSessionIsNotTouchedAgain(t *testing.T) {
	s := newSignedIn(t)
	c := New(s.st, nil)
	storetest.RunListening(t, c.Run, c.Listening)
	ctx := context.Background()
	s.name(t, c)
	seen, expires := time.Now().Add(time.Minute), time.Now().Add(2*time.Hour)
	if err := s.st.TouchSession(ctx, s.session, expires); err != nil {
		t.Fatal(err)
	}
	c.SessionTouched(s.session, seen, expires)
	in, err := c.SignedIn(ctx, s.session, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !in.Session.LastSeenAt.Equal(seen) || !in.Session.ExpiresAt.Equal(expires) {
		t.Errorf("kept session seen %v expiring %v; want %v, %v", in.Session.LastSeenAt, in.Session.ExpiresAt, seen, expires)
	}
}
