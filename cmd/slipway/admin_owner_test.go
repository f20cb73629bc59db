package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestAdminCreateOwner: create-owner makes a user owning a new team from a
// password file, never from the command line, and the setup token stops
// working; a weak password is refused naming the flag and the code.
// Sets the process environment: not parallel.
func TestAdminCreateOwner(t *testing.T) {
	ctx := context.Background()
	dbURL := storetest.NewDatabaseURL(t)
	t.Setenv(config.EnvConfigPath, "")
	t.Setenv("DATABASE_URL", dbURL)
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	st := store.New(pool)
	token, err := service.IssueSetupToken(ctx, st)
	if err != nil || token == "" {
		t.Fatalf("issue setup token: %q %v", token, err)
	}
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runAdmin(t, "create-owner", "--email", "ops@example.com", "--team", "Ops", "--password-file", pwFile); err == nil || !strings.Contains(err.Error(), "--password-file") || !strings.Contains(err.Error(), "password_too_short") {
		t.Fatalf("a short password: %v, want an error naming --password-file and password_too_short", err)
	}
	// There is no flag that takes the password itself.
	if _, err := runAdmin(t, "create-owner", "--email", "ops@example.com", "--team", "Ops", "--password", "correct horse battery"); err == nil {
		t.Fatal("create-owner took a password on the command line")
	}
	if err := os.WriteFile(pwFile, []byte("correct horse battery\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runAdmin(t, "create-owner", "--email", "ops@example.com", "--team", "Ops", "--password-file", pwFile)
	if err != nil || !strings.Contains(out, "ops@example.com") {
		t.Fatalf("create-owner: %v\n%s", err, out)
	}
	u, err := st.GetUserByEmail(ctx, "ops@example.com")
	if err != nil {
		t.Fatal(err)
	}
	teams, err := st.ListUserTeams(ctx, u.ID)
	if err != nil || len(teams) != 1 || teams[0].Role != store.RoleOwner || teams[0].Team.Name != "Ops" {
		t.Fatalf("the new owner's teams: %+v %v", teams, err)
	}
	if ok, _ := auth.VerifyPassword(u.PasswordHash, "correct horse battery"); !ok {
		t.Fatal("the owner's password is not the file's first line")
	}
	if ok, err := service.SetupTokenValid(ctx, st, token); err != nil || ok {
		t.Fatalf("the setup token still works after create-owner: %t %v", ok, err)
	}
}
