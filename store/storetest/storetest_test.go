package storetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func TestNew_RollsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("writes", func(t *testing.T) {
		st := storetest.New(t)
		if _, err := st.CreateTeam(ctx, "x", "rolled-back-back"); err != nil {
			t.Fatal(err)
		}
		// An expected failure leaves the transaction usable.
		if _, err := st.CreateTeam(ctx, "x", "rolled-back-back"); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate slug = %v", err)
		}
		if _, err := st.GetTeamBySlug(ctx, "rolled-back-back"); err != nil {
			t.Fatalf("after a failed statement: %v", err)
		}
	})
	st := storetest.New(t)
	if _, err := st.GetTeamBySlug(ctx, "rolled-back-back"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("team from a finished test is visible: %v", err)
	}
}

func TestNewSchema_Commits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	if st.Pool() == nil {
		t.Fatal("NewSchema store has no pool")
	}
	team, err := st.CreateTeam(ctx, "x", "committed")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM teams WHERE id = $1`, team.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("committed team count = %d, %v", n, err)
	}
	if err := store.CheckSchema(ctx, st.Pool()); err != nil {
		t.Fatalf("fresh database is not fully migrated: %v", err)
	}
}

func TestEmptyDatabaseURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.EmptyDatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("empty database has %d tables (%v)", n, err)
	}
}
