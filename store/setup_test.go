package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// tenant is one team with an owner, an application and an environment.
type tenant struct {
	team  store.Team
	owner store.User
	app   store.Application
	env   store.Environment
}

type testBundle struct {
	ctx context.Context
	st  *store.Store
	a   tenant // the caller's team
	b   tenant // another team, whose objects a must never reach
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	return &testBundle{ctx: ctx, st: st, a: newTenant(t, ctx, st, "alpha"), b: newTenant(t, ctx, st, "beta")}
}

func newTenant(t *testing.T, ctx context.Context, st *store.Store, name string) tenant {
	t.Helper()
	team, err := st.CreateTeam(ctx, name, name)
	must(t, err)
	owner, err := st.CreateUser(ctx, name+"@example.com", name+" owner", "hash")
	must(t, err)
	must(t, st.AddMember(ctx, team.ID, owner.ID, store.RoleOwner))
	app, err := st.CreateApplication(ctx, team.ID, "notes")
	must(t, err)
	env, err := st.CreateEnvironment(ctx, team.ID, store.EnvironmentParams{
		ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "notes-production",
	})
	must(t, err)
	return tenant{team: team, owner: owner, app: app, env: env}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func wantConflict(t *testing.T, err error, field, code string) {
	t.Helper()
	var ce *store.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("error = %v, want a *ConflictError", err)
	}
	if ce.Field != field || ce.Code != code {
		t.Fatalf("conflict = %+v, want field %q code %q", ce, field, code)
	}
}

// secret returns a random token and its hash, as the app makes them.
func secret(t *testing.T) (string, []byte) {
	t.Helper()
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	return tok, store.HashToken(tok)
}

func ptr[T any](v T) *T { return &v }

var hour = time.Hour

// tenancyCovered names team-scoped Store methods whose cross-team behaviour
// a test outside tenancy_test.go checks. A file adding such methods
// registers them, next to its own cross-team test:
//
//	func init() { tenancyCovered["GetSecret"] = "TestSecret_TeamScoped" }
//
// TestStore_TeamScoped fails for any method with a teamID parameter that is
// neither in its tables nor registered here.
var tenancyCovered = map[string]string{}
