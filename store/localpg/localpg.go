package localpg

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Database is the database Start creates for Slipway.
const Database = "slipway"

// superuser is the cluster's bootstrap role. Only the socket's owner (and
// root) can reach the socket, so trust authentication is safe.
const superuser = "postgres"

// binGlob is where Debian installs each Postgres major version.
const binGlob = "/usr/lib/postgresql/*/bin"

// maxSocketPath is sun_path's size on Linux minus the terminating NUL.
const maxSocketPath = 107

// Cluster is a running private Postgres.
type Cluster struct {
	dir     string // data directory, also the socket directory
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	logPath string
	logger  *slog.Logger
}

// Start initializes (if needed) and starts the cluster in <dataDir>/pg,
// waits until it accepts connections, and creates the slipway database
// if missing. Stop it with Stop.
func Start(ctx context.Context, dataDir string, logger *slog.Logger) (*Cluster, error) {
	if logger == nil {
		logger = slog.Default()
	}
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dataDir, err)
	}
	dir := filepath.Join(abs, "pg")
	if n := len(filepath.Join(dir, ".s.PGSQL.5432")); n > maxSocketPath {
		return nil, fmt.Errorf("data_dir_too_long: the Postgres socket path under %s would be %d bytes, over the %d-byte limit of unix sockets; choose a shorter --data-dir", abs, n, maxSocketPath)
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	if cred != nil && !reachable(abs, cred) {
		// A checkout under /root, say: the postgres user cannot pass
		// through it, so the cluster lives in a directory of its own,
		// named after the data directory so it is found again.
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("data dir %s: %w", abs, err)
		}
		parent := fallbackDir(abs)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("postgres dir %s: %w", parent, err)
		}
		dir = filepath.Join(parent, "pg")
		logger.InfoContext(ctx, "the postgres user cannot enter the data directory; keeping the private postgres elsewhere", "data_dir", abs, "dir", dir)
		if err := prepareDir(parent, dir, cred); err != nil {
			return nil, err
		}
	} else if err := prepareDir(abs, dir, cred); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		logger.InfoContext(ctx, "initializing private postgres", "dir", dir, "bin", bin)
		if err := initdb(ctx, bin, dir, cred); err != nil {
			return nil, err
		}
	}
	c := &Cluster{dir: dir, done: make(chan struct{}), logPath: filepath.Join(abs, "postgres.log"), logger: logger}
	if err := c.start(bin, cred); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		_ = c.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	if err := c.createDatabase(ctx); err != nil {
		_ = c.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	logger.InfoContext(ctx, "private postgres started", "dir", dir, "pid", c.cmd.Process.Pid)
	return c, nil
}

// findBinDir returns the bin directory of the highest installed major
// version that has both initdb and postgres.
func findBinDir() (string, error) {
	dirs, _ := filepath.Glob(binGlob)
	type candidate struct {
		dir     string
		version int
	}
	var found []candidate
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil {
			continue
		}
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			found = append(found, candidate{d, v})
		}
	}
	if len(found) == 0 {
		return "", fmt.Errorf("postgres_not_installed: no initdb and postgres under %s; install the postgresql package (apt-get install postgresql) or set DATABASE_URL", binGlob)
	}
	best := slices.MaxFunc(found, func(a, b candidate) int { return a.version - b.version })
	return best.dir, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// fallbackRoot holds private clusters whose data directory the postgres
// user cannot reach. It is a directory of its own: serve's default data
// directory, /var/lib/slipway, is private to root once serve wrote its
// setup token there, and the postgres user could not pass through it.
const fallbackRoot = "/var/lib/slipway-postgres"

// legacyFallbackRoot is where earlier versions kept those clusters; one
// found there is used again.
const legacyFallbackRoot = "/var/lib/slipway"

// fallbackDir is the directory holding the private cluster of dataDir
// when the postgres user cannot reach dataDir, named after it so it is
// found again.
func fallbackDir(dataDir string) string {
	sum := sha256.Sum256([]byte(dataDir))
	name := "dev-" + hex.EncodeToString(sum[:6])
	if legacy := filepath.Join(legacyFallbackRoot, name); fileExists(filepath.Join(legacy, "pg", "PG_VERSION")) {
		return legacy
	}
	return filepath.Join(fallbackRoot, name)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// reachable reports whether the postgres user can pass through every
// directory down to dir (the parts that exist).
func reachable(dir string, cred *syscall.Credential) bool {
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil && !searchable(p, cred) {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// credential returns the postgres system user's ids when running as root,
// nil otherwise (run as ourselves).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(superuser)
	if err != nil {
		return nil, fmt.Errorf("postgres_user_missing: running as root, Postgres must run as the postgres system user, which does not exist (%w); install the postgresql package", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("postgres user has non-numeric ids %s:%s", u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// prepareDir creates the data directory owned by whoever runs Postgres,
// and checks that user can reach it: Postgres opens it by path.
func prepareDir(dataDir, dir string, cred *syscall.Credential) error {
	// The data dir holds other things of Slipway's; the postgres user only
	// needs to pass through it.
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("data dir %s: %w", dataDir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("postgres dir %s: %w", dir, err)
	}
	// initdb insists on 0700 (or 0750); MkdirAll keeps an existing mode.
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("postgres dir %s: %w", dir, err)
	}
	if cred == nil {
		return nil
	}
	if err := chownTree(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("postgres dir %s: give it to the postgres user: %w", dir, err)
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		if !searchable(p, cred) {
			return fmt.Errorf("data_dir_unreachable: Postgres runs as the postgres user, which cannot enter %s on the way to %s; choose a --data-dir outside it, or let other users pass through it (chmod o+x %s)", p, dir, p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// chownTree gives dir and everything in it to uid:gid, so a cluster that
// was created by a non-root run keeps working when run as root.
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// searchable reports whether the credential's user may traverse dir.
func searchable(dir string, cred *syscall.Credential) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	mode := fi.Mode().Perm()
	switch {
	case st.Uid == cred.Uid:
		return mode&0o100 != 0
	case st.Gid == cred.Gid:
		return mode&0o010 != 0
	default:
		return mode&0o001 != 0
	}
}

// configure sets what both binaries need on cmd.
func configure(cmd *exec.Cmd, cred *syscall.Credential) *exec.Cmd {
	cmd.Dir = "/"
	// Own process group: a Ctrl-C in the terminal reaches Slipway, which
	// stops its own work first and Postgres last, not Postgres directly.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	// Postgres must not inherit Slipway's environment (DATABASE_URL, tokens).
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin"}
	return cmd
}

func initdb(ctx context.Context, bin, dir string, cred *syscall.Credential) error {
	cmd := configure(exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"--pgdata", dir,
		"--username", superuser,
		"--auth", "trust",
		"--encoding", "UTF8",
		"--locale", "C",
	), cred)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("postgres_init_failed: initdb in %s: %w: %s", dir, err, lastLines(out, 10))
	}
	return nil
}

func (c *Cluster) start(bin string, cred *syscall.Credential) error {
	logFile, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("postgres log %s: %w", c.logPath, err)
	}
	// No context: the cluster outlives Start's ctx and stops through Stop.
	cmd := configure(exec.Command(filepath.Join(bin, "postgres"),
		"-D", c.dir,
		"-c", "listen_addresses=",
		"-c", "unix_socket_directories="+c.dir,
		"-c", "unix_socket_permissions=0700",
	), cred)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// If Slipway dies without stopping it, Postgres shuts down too rather
	// than holding the data directory's lock forever.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start postgres: %w", err)
	}
	c.cmd = cmd
	go func() {
		c.waitErr = cmd.Wait()
		logFile.Close()
		close(c.done)
	}()
	return nil
}

// URL is the connection string for the slipway database, over the socket.
func (c *Cluster) URL() string {
	return c.urlFor(Database)
}

func (c *Cluster) urlFor(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(superuser), Host: "", Path: "/" + db,
		RawQuery: "host=" + url.QueryEscape(c.dir) + "&sslmode=disable"}
	return u.String()
}

// Dir is the cluster's data and socket directory.
func (c *Cluster) Dir() string { return c.dir }

// PID is the postmaster's process id.
func (c *Cluster) PID() int { return c.cmd.Process.Pid }

// Done is closed when the postmaster has exited, whether stopped or not.
func (c *Cluster) Done() <-chan struct{} { return c.done }

func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var lastErr error
	for {
		conn, err := pgx.Connect(ctx, c.urlFor("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		lastErr = err
		select {
		case <-c.done:
			return fmt.Errorf("postgres_start_failed: postgres exited at start (%v): %s", c.waitErr, c.logTail())
		case <-ctx.Done():
			return fmt.Errorf("postgres_start_failed: not accepting connections after 60s (%v): %s", lastErr, c.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) createDatabase(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, c.urlFor("postgres"))
	if err != nil {
		return fmt.Errorf("connect to private postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, Database).Scan(&exists); err != nil {
		return fmt.Errorf("private postgres: %w", err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{Database}.Sanitize()); err != nil {
		return fmt.Errorf("private postgres: create database %s: %w", Database, err)
	}
	return nil
}

// Stop shuts the cluster down with a fast shutdown (SIGINT: connections
// are closed, data is flushed) and waits for the postmaster to exit. If ctx
// ends first it escalates to an immediate shutdown (SIGQUIT), which the
// next start recovers from, and still waits.
func (c *Cluster) Stop(ctx context.Context) error {
	select {
	case <-c.done:
		return nil
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop postgres: %w", err)
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		c.logger.Warn("private postgres did not stop in time; forcing immediate shutdown", "pid", c.PID())
		_ = c.cmd.Process.Signal(syscall.SIGQUIT)
		<-c.done
	}
	c.logger.Info("private postgres stopped", "dir", c.dir)
	return nil
}

func (c *Cluster) logTail() string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return "(no log at " + c.logPath + ")"
	}
	return lastLines(b, 10) + " (log: " + c.logPath + ")"
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
