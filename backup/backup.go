package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
)

// Dump writes the database databaseURL names to file in pg_dump's custom
// format, with every table of every schema (Slipway's and River's). The
// file is created with mode 0600: it holds sealed secrets and token hashes.
func Dump(ctx context.Context, databaseURL, file string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	err = run(ctx, "pg_dump", databaseURL, "--format=custom", "--no-owner", "--no-privileges", "--file="+file)
	if err != nil {
		_ = os.Remove(file)
	}
	return err
}

// Restore replaces the contents of the database databaseURL names with the
// dump in file, in one transaction: objects the dump holds are dropped and
// recreated, and any error leaves the database as it was. Stop serve and
// worker first; start them (or run slipway migrate) afterwards so a dump
// of an older version is migrated forward.
func Restore(ctx context.Context, databaseURL, file string) error {
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return run(ctx, "pg_restore", databaseURL, "--clean", "--if-exists", "--no-owner", "--no-privileges",
		"--single-transaction", "--exit-on-error", file)
}

// run executes tool with args and the connection in its environment: the
// password goes in PGPASSWORD rather than the argument list, where any
// local user could read it from the process table.
func run(ctx context.Context, tool, databaseURL string, args ...string) error {
	path, err := exec.LookPath(tool)
	if err != nil {
		return fmt.Errorf("%s_not_installed: %s is not on PATH; install the PostgreSQL client matching the server's major version (apt-get install postgresql-client)", tool, tool)
	}
	dsn, password, err := splitPassword(databaseURL)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, append([]string{"--dbname=" + dsn}, args...)...)
	cmd.Env = os.Environ()
	if password != "" {
		cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var exit *exec.ExitError
		if errors.As(err, &exit) && msg != "" {
			return fmt.Errorf("%s failed: %s", tool, msg)
		}
		return fmt.Errorf("%s: %w", tool, err)
	}
	return nil
}

// splitPassword removes the password from a postgres:// URL. A
// keyword/value string is passed on as it is, unless it holds a password.
func splitPassword(databaseURL string) (dsn, password string, err error) {
	if databaseURL == "" {
		return "", "", errors.New("database_url_missing: set DATABASE_URL to the database to back up or restore")
	}
	if !strings.Contains(databaseURL, "://") {
		if strings.Contains(databaseURL, "password") {
			return "", "", errors.New("database_url_password: write DATABASE_URL as a postgres:// URL, or keep the password in PGPASSWORD or ~/.pgpass, so it stays out of the process table")
		}
		return databaseURL, "", nil
	}
	u, err := url.Parse(databaseURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", "", errors.New("database_url_invalid: DATABASE_URL must be a postgres:// URL or a keyword/value string")
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			password = p
			u.User = url.User(u.User.Username())
		}
	}
	return u.String(), password, nil
}
