package localpg_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/slipwayhq/slipway/store/localpg"
)

// dataDir returns a fresh directory the postgres user can reach when the
// test runs as root (t.TempDir's directories are private to their owner).
func dataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p := dir; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "data")
}

func query(t *testing.T, url, sql string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	var out string
	if err := conn.QueryRow(ctx, sql).Scan(&out); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func TestStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := dataDir(t)
	logger := slog.New(slog.DiscardHandler)

	c, err := localpg.Start(ctx, dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop(context.Background())
		}
	})
	if db := query(t, c.URL(), `SELECT current_database()`); db != localpg.Database {
		t.Fatalf("connected to %q, want %q", db, localpg.Database)
	}
	// Socket only: no TCP listener.
	if addrs := query(t, c.URL(), `SHOW listen_addresses`); addrs != "" {
		t.Fatalf("listen_addresses = %q, want empty", addrs)
	}
	if !strings.Contains(c.URL(), "host="+strings.ReplaceAll(filepath.Join(dir, "pg"), "/", "%2F")) {
		t.Fatalf("URL %s does not point at the socket in %s", c.URL(), dir)
	}
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if os.Geteuid() == 0 {
		fi, err := os.Stat(filepath.Join(dir, "pg", "PG_VERSION"))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid == 0 {
			t.Fatal("running as root, but the data directory is owned by root")
		}
	}

	pid := c.PID()
	socket := filepath.Join(dir, "pg", ".s.PGSQL.5432")
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("postmaster %d still exists after Stop (kill 0: %v)", pid, err)
	}
	if _, err := os.Stat(socket); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket %s still there after Stop: %v", socket, err)
	}
	if err := c.Stop(stopCtx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	// A second start reuses the cluster and its data.
	c2, err := localpg.Start(ctx, dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c2.Stop(context.Background()) })
	if v := query(t, c2.URL(), `SELECT v FROM kept`); v != "still here" {
		t.Fatalf("data after restart = %q", v)
	}
}

func TestStart_DataDirTooLong(t *testing.T) {
	t.Parallel()
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	_, err := localpg.Start(context.Background(), long, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "data_dir_too_long") {
		t.Fatalf("Start with a long data dir = %v, want data_dir_too_long", err)
	}
}

func TestStart_UnreachableAsRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root hands Postgres to another user") // the rule only exists for root
	}
	// A data directory the postgres user cannot pass through (a checkout
	// under /root, say) keeps its cluster under /var/lib/slipway-postgres
	// instead, which is reachable even where serve made /var/lib/slipway
	// private.
	private := t.TempDir() // 0700, root's
	dataDir := filepath.Join(private, "data")
	c, err := localpg.Start(context.Background(), dataDir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("Start in a private dir: %v", err)
	}
	t.Cleanup(func() {
		_ = c.Stop(context.Background())
		_ = os.RemoveAll(filepath.Dir(c.Dir()))
	})
	if !strings.HasPrefix(c.Dir(), "/var/lib/slipway-postgres/") {
		t.Fatalf("cluster in %s, want it under /var/lib/slipway-postgres", c.Dir())
	}
	if v := query(t, c.URL(), `SELECT 'reachable'`); v != "reachable" {
		t.Fatalf("query = %q", v)
	}
}
