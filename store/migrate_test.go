package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func emptyPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), storetest.EmptyDatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func TestMigrate_FromZero(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyPool(t)

	if err := store.CheckSchema(ctx, pool); !errors.Is(err, store.ErrSchemaOutdated) {
		t.Fatalf("CheckSchema on empty database = %v, want ErrSchemaOutdated", err)
	}
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	v, err := store.SchemaVersion(ctx, pool)
	if err != nil || v != len(ms) {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, len(ms))
	}
	if err := store.CheckSchema(ctx, pool); err != nil {
		t.Fatalf("CheckSchema after Migrate: %v", err)
	}
	// River's tables came with it.
	var river bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('river_job') IS NOT NULL`).Scan(&river); err != nil || !river {
		t.Fatalf("river_job exists = %v, %v", river, err)
	}
	// Migrating again changes nothing.
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&rows); err != nil || rows != len(ms) {
		t.Fatalf("schema_migrations rows = %d, %v; want %d", rows, err, len(ms))
	}
}

func TestMigrate_Concurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyPool(t)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = store.Migrate(ctx, pool) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate %d: %v", i, err)
		}
	}
	if err := store.CheckSchema(ctx, pool); err != nil {
		t.Fatalf("CheckSchema: %v", err)
	}
}

func TestMigrate_RefusesNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := emptyPool(t)
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_from_the_future')`); err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, pool); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("Migrate = %v, want ErrSchemaTooNew", err)
	}
	if err := store.CheckSchema(ctx, pool); !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("CheckSchema = %v, want ErrSchemaTooNew", err)
	}
}

func TestMigrations_Sequence(t *testing.T) {
	t.Parallel()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %s has version %d, want %d", m.Name, m.Version, i+1)
		}
	}
}
