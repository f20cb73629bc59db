package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/slipwayhq/slipway/migrations"
)

// ErrSchemaTooNew is returned when the database holds a migration this
// binary does not know: a newer Slipway migrated it, and running an older
// one against it could corrupt data. Migrations are forward-only.
var ErrSchemaTooNew = errors.New("schema_too_new: the database was migrated by a newer Slipway; upgrade this binary")

// ErrSchemaOutdated is returned by CheckSchema when migrations are pending.
var ErrSchemaOutdated = errors.New("schema_outdated: the database needs migrating; run slipway migrate")

// migrateLockKey is the advisory lock serializing Migrate across processes
// ("slip" in ASCII), so several serve/worker processes starting at once
// apply each migration exactly once.
const migrateLockKey = 0x736c6970

// Migration is one embedded schema migration.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in order. A gap or a duplicate
// version is an error: the list is append-only.
func Migrations() ([]Migration, error) {
	return loadMigrations(migrations.FS)
}

func loadMigrations(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	var ms []Migration
	for i, name := range names {
		prefix, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", name)
		}
		if v != i+1 {
			return nil, fmt.Errorf("migration %s: version %d out of sequence, want %d", name, v, i+1)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		ms = append(ms, Migration{Version: v, Name: strings.TrimSuffix(name, ".sql"), SQL: string(b)})
	}
	return ms, nil
}

// Migrate brings the database up to date: River's tables first (through
// rivermigrate), then Slipway's migrations in order, each in its own
// transaction with its schema_migrations row. A session advisory lock makes
// concurrent callers (several processes starting at once) wait for each
// other. It refuses a database migrated by a newer binary with
// ErrSchemaTooNew, before changing anything.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := Migrations()
	if err != nil {
		return err
	}
	return migrate(ctx, pool, ms)
}

func migrate(ctx context.Context, pool *pgxpool.Pool, ms []Migration) error {
	migrator, err := newRiverMigrator(pool)
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLockKey)); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrateLockKey))
	}()
	if _, err := conn.Exec(ctx, `
		CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	current, err := schemaVersion(ctx, conn)
	if err != nil {
		return err
	}
	// Everything runs on the locked connection: callers waiting for the
	// lock may hold the pool's other connections.
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		return checkNotTooNew(ctx, tx, migrator, current, len(ms))
	})
	if err != nil {
		return err
	}
	for {
		// One River migration per transaction: some cannot share one (an
		// enum value added and used).
		var applied int
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			//lint:ignore SA1019 each step needs its own transaction, which Migrate does not give (see above).
			res, err := migrator.MigrateTx(ctx, tx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{MaxSteps: 1})
			if err != nil {
				return err
			}
			applied = len(res.Versions)
			return nil
		})
		if err != nil {
			return fmt.Errorf("migrate: river: %w", err)
		}
		if applied == 0 {
			break
		}
	}
	for _, m := range ms[current:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
	}
	return nil
}

func newRiverMigrator(pool *pgxpool.Pool) (*rivermigrate.Migrator[pgx.Tx], error) {
	// River logs every applied migration at info; the caller reports the
	// outcome once, so only River's warnings get through.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("river migrator: %w", err)
	}
	return m, nil
}

// CheckSchema verifies that the database is exactly at the schema this
// binary knows, without changing it: ErrSchemaTooNew when it is ahead,
// ErrSchemaOutdated when migrations (Slipway's or River's) are pending.
func CheckSchema(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := Migrations()
	if err != nil {
		return err
	}
	migrator, err := newRiverMigrator(pool)
	if err != nil {
		return err
	}
	current, err := SchemaVersion(ctx, pool)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return checkNotTooNew(ctx, tx, migrator, current, len(ms))
	})
	if err != nil {
		return err
	}
	if current < len(ms) {
		return fmt.Errorf("%w (database at %d, binary knows %d)", ErrSchemaOutdated, current, len(ms))
	}
	res, err := migrator.Validate(ctx, nil)
	if err != nil {
		return fmt.Errorf("check schema: river: %w", err)
	}
	if !res.OK {
		return fmt.Errorf("%w (river: %s)", ErrSchemaOutdated, strings.Join(res.Messages, "; "))
	}
	return nil
}

// SchemaVersion returns the highest Slipway migration applied, 0 for an
// empty database.
func SchemaVersion(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	return schemaVersion(ctx, pool)
}

func schemaVersion(ctx context.Context, db interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) (int, error) {
	var v int
	if err := db.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

func checkNotTooNew(ctx context.Context, tx pgx.Tx, migrator *rivermigrate.Migrator[pgx.Tx], current, known int) error {
	if current > known {
		return fmt.Errorf("%w (database at %d, binary knows %d)", ErrSchemaTooNew, current, known)
	}
	existing, err := migrator.ExistingVersionsTx(ctx, tx)
	if err != nil {
		return fmt.Errorf("river versions: %w", err)
	}
	all := migrator.AllVersions()
	if len(existing) > 0 && len(all) > 0 && existing[len(existing)-1].Version > all[len(all)-1].Version {
		return fmt.Errorf("%w (river schema at %d, binary knows %d)", ErrSchemaTooNew,
			existing[len(existing)-1].Version, all[len(all)-1].Version)
	}
	return nil
}
