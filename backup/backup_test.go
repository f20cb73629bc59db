package backup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/backup"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func open(t *testing.T, url string) *store.Store {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool)
}

// TestDumpRestore_RoundTrip dumps a database, restores it into an empty
// one and over a changed one, and reads the same rows back.
func TestDumpRestore_RoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := storetest.NewDatabaseURL(t)
	st := open(t, src)
	team, err := st.CreateTeam(ctx, "Backup", "backup-team")
	if err != nil {
		t.Fatal(err)
	}
	app, err := st.CreateApplication(ctx, team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "slipway.dump")
	if err := backup.Dump(ctx, src, file); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Fatalf("dump file %v, %v; want a non-empty 0600 file", fi, err)
	}

	// Into an empty database: the schema, River's tables and the rows.
	dst := storetest.EmptyDatabaseURL(t)
	if err := backup.Restore(ctx, dst, file); err != nil {
		t.Fatal(err)
	}
	restored := open(t, dst)
	if err := store.CheckSchema(ctx, restored.Pool()); err != nil {
		t.Fatalf("restored schema: %v", err)
	}
	got, err := restored.GetApplicationByName(ctx, team.ID, "notes")
	if err != nil || got.ID != app.ID {
		t.Fatalf("restored application %+v, %v; want %s", got, err, app.ID)
	}

	// Over the source after a change: the change is gone.
	if _, err := st.CreateApplication(ctx, team.ID, "later"); err != nil {
		t.Fatal(err)
	}
	st.Pool().Reset()
	if err := backup.Restore(ctx, src, file); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetApplicationByName(ctx, team.ID, "later"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("application created after the dump: %v, want ErrNotFound", err)
	}
	if _, err := st.GetApplicationByName(ctx, team.ID, "notes"); err != nil {
		t.Fatal(err)
	}
}

func TestRestore_BadFileLeavesDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewDatabaseURL(t)
	st := open(t, url)
	team, err := st.CreateTeam(ctx, "Keep", "keep-team")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "junk.dump")
	if err := os.WriteFile(file, []byte("not a dump"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := backup.Restore(ctx, url, file); err == nil {
		t.Fatal("restoring junk succeeded")
	}
	if _, err := st.GetTeam(ctx, team.ID); err != nil {
		t.Fatalf("team after a failed restore: %v", err)
	}
	if err := backup.Dump(ctx, "mysql://x", file); err == nil {
		t.Fatal("a non-postgres URL was accepted")
	}
}
