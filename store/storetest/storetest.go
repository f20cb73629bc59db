package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/slipwayhq/slipway/store"
)

// dbPrefix names every database this package creates, so stale ones are
// recognisable and never confused with anything else on the server.
const dbPrefix = "slipway_test_"

// templateLockKey serializes template creation across test binaries, which
// `go test ./...` runs in parallel.
const templateLockKey = 0x736c_7465_7374

type kit struct {
	base     *url.URL // DATABASE_URL
	admin    *pgxpool.Pool
	template string
	shared   *pgxpool.Pool // the binary's database for New
}

var (
	kitOnce sync.Once
	theKit  *kit
	kitErr  error
)

func getKit(t testing.TB) *kit {
	t.Helper()
	kitOnce.Do(func() { theKit, kitErr = newKit(context.Background()) })
	if kitErr != nil {
		t.Fatalf("storetest: %v", kitErr)
	}
	return theKit
}

func newKit(ctx context.Context) (*kit, error) {
	raw := os.Getenv("DATABASE_URL")
	if raw == "" {
		return nil, fmt.Errorf("DATABASE_URL is not set: store tests need a real Postgres; " +
			"run them with `make test`, or export DATABASE_URL=$(bash scripts/test-postgres.sh)")
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "postgres" && base.Scheme != "postgresql") {
		return nil, fmt.Errorf("DATABASE_URL must be a postgres:// URL, got %q", raw)
	}
	admin, err := pgxpool.New(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("connect to DATABASE_URL: %w", err)
	}
	if err := admin.Ping(ctx); err != nil {
		admin.Close()
		return nil, fmt.Errorf("connect to DATABASE_URL: %w", err)
	}
	k := &kit{base: base, admin: admin}
	k.dropStale(ctx)
	if k.template, err = k.ensureTemplate(ctx); err != nil {
		return nil, err
	}
	name, err := k.clone(ctx)
	if err != nil {
		return nil, err
	}
	if k.shared, err = k.pool(ctx, name); err != nil {
		return nil, err
	}
	return k, nil
}

// url returns the base URL pointing at database name.
func (k *kit) url(name string) string {
	u := *k.base
	u.Path = "/" + name
	return u.String()
}

func (k *kit) pool(ctx context.Context, name string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(k.url(name))
	if err != nil {
		return nil, fmt.Errorf("pool for %s: %w", name, err)
	}
	cfg.MaxConns = 20
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pool for %s: %w", name, err)
	}
	return p, nil
}

// schemaHash identifies the schema a template holds: Slipway's migrations
// and River's.
func schemaHash() (string, error) {
	ms, err := store.Migrations()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%d %s\n%s\n", m.Version, m.Name, m.SQL)
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		return "", err
	}
	for _, m := range migrator.AllVersions() {
		fmt.Fprintf(h, "river %d\n%s\n", m.Version, m.SQLUp)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureTemplate creates the migrated template database unless it exists.
// It migrates under a temporary name and renames when done, so another
// binary never clones a half-migrated template; the advisory lock keeps two
// binaries from building it at once.
func (k *kit) ensureTemplate(ctx context.Context) (string, error) {
	hash, err := schemaHash()
	if err != nil {
		return "", fmt.Errorf("schema hash: %w", err)
	}
	name := dbPrefix + "tpl_" + hash
	conn, err := k.admin.Acquire(ctx)
	if err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(templateLockKey)); err != nil {
		return "", fmt.Errorf("template lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(templateLockKey))
	}()

	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	if exists {
		return name, nil
	}
	building := name + "_building"
	if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{building}.Sanitize()+` WITH (FORCE)`); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{building}.Sanitize()+` TEMPLATE template0`); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	p, err := k.pool(ctx, building)
	if err != nil {
		return "", err
	}
	err = store.Migrate(ctx, p)
	p.Close()
	if err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	if _, err := conn.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{building}.Sanitize()+` RENAME TO `+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	// Templates of earlier schemas are dead weight once the schema moved on.
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2`,
		dbPrefix+"tpl_%", name)
	if err == nil {
		old, _ := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, o := range old {
			_ = k.drop(ctx, o)
		}
	}
	return name, nil
}

// clone creates a database from the template, named after this process so
// a later run can tell it is stale.
func (k *kit) clone(ctx context.Context) (string, error) {
	return k.create(ctx, k.template)
}

func (k *kit) create(ctx context.Context, template string) (string, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("%s%d_%s", dbPrefix, os.Getpid(), hex.EncodeToString(b[:]))
	// Concurrent clones of one template are fine; the template only must
	// have no open connection, which is why the kit never keeps one.
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		_, err = k.admin.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()+` TEMPLATE `+pgx.Identifier{template}.Sanitize())
		if err == nil || !strings.Contains(err.Error(), "is being accessed by other users") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return name, nil
}

func (k *kit) drop(ctx context.Context, name string) error {
	_, err := k.admin.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`)
	return err
}

// dropStale drops databases left by test binaries that have exited (the
// shared database has no end-of-binary hook to drop it). It only judges
// databases named with a pid, and only on the local machine's pids, which is
// where make test runs Postgres.
func (k *kit) dropStale(ctx context.Context) {
	rows, err := k.admin.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE $1`, dbPrefix+"%")
	if err != nil {
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, name := range names {
		var pid int
		if _, err := fmt.Sscanf(strings.TrimPrefix(name, dbPrefix), "%d_", &pid); err != nil || pid <= 0 {
			continue
		}
		if pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		_ = k.drop(ctx, name)
	}
}

// New returns a Store bound to a transaction on the binary's shared test
// database; the transaction is rolled back when the test ends, so tests
// cannot see each other's rows and may run in parallel. WithTx inside it
// uses savepoints. A test that must commit (or run a River client, which
// needs its own connections) uses NewSchema.
func New(t testing.TB) *store.Store {
	t.Helper()
	k := getKit(t)
	ctx := context.Background()
	tx, err := k.shared.Begin(ctx)
	if err != nil {
		t.Fatalf("storetest: begin: %v", err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return store.OnTx(savepointDB{tx: tx}, tx)
}

// NewSchema returns a Store over a pool to a fresh migrated database of its
// own (Store.Pool() gives the pool, e.g. for a River client); the database
// is dropped when the test ends.
func NewSchema(t testing.TB) *store.Store {
	t.Helper()
	k := getKit(t)
	ctx := context.Background()
	name := k.newDatabase(t, k.template)
	p, err := k.pool(ctx, name)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	// Cleanups run last-in first-out: the pool closes before the drop.
	t.Cleanup(p.Close)
	return store.New(p)
}

// NewDatabaseURL returns the URL of a fresh migrated database, dropped when
// the test ends (forcibly, closing connections a process left open).
func NewDatabaseURL(t testing.TB) string {
	t.Helper()
	k := getKit(t)
	return k.url(k.newDatabase(t, k.template))
}

// EmptyDatabaseURL returns the URL of a fresh empty database, dropped when
// the test ends; migration tests start from it.
func EmptyDatabaseURL(t testing.TB) string {
	t.Helper()
	k := getKit(t)
	return k.url(k.newDatabase(t, "template0"))
}

func (k *kit) newDatabase(t testing.TB, template string) string {
	t.Helper()
	name, err := k.create(context.Background(), template)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	t.Cleanup(func() {
		if err := k.drop(context.Background(), name); err != nil {
			t.Errorf("storetest: drop %s: %v", name, err)
		}
	})
	return name
}
