package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

type stateBundle struct {
	ctx    context.Context
	st     *store.Store
	team   store.Team
	user   store.User
	other  store.User
	states github.States
	now    time.Time
}

func setupStates(t *testing.T) *stateBundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	team, err := st.CreateTeam(ctx, "Acme", "acme")
	if err != nil {
		t.Fatal(err)
	}
	user, err := st.CreateUser(ctx, "owner@example.com", "Owner", "hash")
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.CreateUser(ctx, "other@example.com", "Other", "hash")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []store.User{user, other} {
		if err := st.AddMember(ctx, team.ID, u.ID, store.RoleOwner); err != nil {
			t.Fatal(err)
		}
	}
	b := &stateBundle{ctx: ctx, st: st, team: team, user: user, other: other, now: time.Now()}
	b.states = github.States{Key: []byte(strings.Repeat("k", 32)), Now: func() time.Time { return b.now }}
	return b
}

func (b *stateBundle) bound(t *testing.T, installationID int64) bool {
	t.Helper()
	_, err := b.st.GetGitHubInstallation(b.ctx, b.team.ID, installationID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func TestStates_BindInstallation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		state   func(t *testing.T, b *stateBundle) string
		user    func(b *stateBundle) string
		advance time.Duration
		wantErr error
	}{
		{name: "valid", state: func(t *testing.T, b *stateBundle) string { return b.newState(t) }},
		{name: "bad signature", wantErr: github.ErrStateInvalid, state: func(t *testing.T, b *stateBundle) string {
			s := b.newState(t)
			return s[:len(s)-2] + "AA"
		}},
		{name: "other key", wantErr: github.ErrStateInvalid, state: func(t *testing.T, b *stateBundle) string {
			other := github.States{Key: []byte(strings.Repeat("z", 32))}
			s, err := other.New(b.team.ID, b.user.ID)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{name: "garbage", wantErr: github.ErrStateInvalid, state: func(*testing.T, *stateBundle) string { return "not-a-state" }},
		{name: "expired", wantErr: github.ErrStateExpired, advance: 11 * time.Minute, state: func(t *testing.T, b *stateBundle) string { return b.newState(t) }},
		{name: "other user", wantErr: github.ErrStateWrongUser, user: func(b *stateBundle) string { return b.other.ID },
			state: func(t *testing.T, b *stateBundle) string { return b.newState(t) }},
		{name: "reused", wantErr: github.ErrStateUsed, state: func(t *testing.T, b *stateBundle) string {
			s := b.newState(t)
			if err := b.states.BindInstallation(b.ctx, b.st, s, 500, b.user.ID); err != nil {
				t.Fatal(err)
			}
			return s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupStates(t)
			state := tt.state(t, b)
			b.now = b.now.Add(tt.advance)
			user := b.user.ID
			if tt.user != nil {
				user = tt.user(b)
			}
			err := b.states.BindInstallation(b.ctx, b.st, state, 42, user)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				inst, err := b.st.GetGitHubInstallation(b.ctx, b.team.ID, 42)
				if err != nil || inst.BoundBy != b.user.ID || !inst.Active() {
					t.Fatalf("installation = %+v, %v", inst, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if b.bound(t, 42) {
				t.Fatal("a refused state bound the installation")
			}
		})
	}
}

func (b *stateBundle) newState(t *testing.T) string {
	t.Helper()
	s, err := b.states.New(b.team.ID, b.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStates_BindInstallation_Refusals(t *testing.T) {
	t.Parallel()
	b := setupStates(t)
	// A user who left the team binds nothing.
	s := b.newState(t)
	if err := b.st.RemoveMember(b.ctx, b.team.ID, b.other.ID); err != nil {
		t.Fatal(err)
	}
	sOther, err := b.states.New(b.team.ID, b.other.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.states.BindInstallation(b.ctx, b.st, sOther, 42, b.other.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("former member: err = %v, want ErrNotFound", err)
	}
	// An installation bound to another team is refused, and the state stays
	// unused: the refusal happened in the same transaction.
	otherTeam, err := b.st.CreateTeam(b.ctx, "Other", "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.BindGitHubInstallation(b.ctx, otherTeam.ID, 42, b.user.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.states.BindInstallation(b.ctx, b.st, s, 42, b.user.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("bound elsewhere: err = %v, want a conflict", err)
	}
	if b.bound(t, 42) {
		t.Fatal("installation of another team was rebound")
	}
	if err := b.states.BindInstallation(b.ctx, b.st, s, 43, b.user.ID); err != nil {
		t.Fatalf("the state should still be usable after a refused bind: %v", err)
	}
}
