package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
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
	st := adminTestStore(t)
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

// TestAdminTeamQuota: the operator gives a team its own quotas by slug,
// sees them with the team's use, returns one to the default, and is told
// the name and code of a mistake. Sets the process environment: not
// parallel.
func TestAdminTeamQuota(t *testing.T) {
	ctx := context.Background()
	st := adminTestStore(t)
	if err := storeQuotaDefaults(ctx, st, config.Default()); err != nil {
		t.Fatal(err)
	}
	_, team, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{Email: "o@example.com", Password: "correct horse battery", TeamName: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateApplication(ctx, team.ID, "notes"); err != nil {
		t.Fatal(err)
	}
	out, err := runAdmin(t, "team", "quota", team.Slug, "--set", "applications=3", "--set", "cpu-millis=4000")
	if err != nil {
		t.Fatalf("set: %v\n%s", err, out)
	}
	for _, want := range []string{"applications", "3", "team", "cpu_millis", "4000 millicores", "volumes", "100", "default"} {
		if !strings.Contains(out, want) {
			t.Fatalf("quota table lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "applications" && f[len(f)-1] != "1" {
			t.Fatalf("applications row %q, want the team's use 1", l)
		}
	}
	out, err = runAdmin(t, "team", "quota", team.ID, "--reset", "applications")
	if err != nil || !regexpMatch(`applications\s+50\s+default`, out) {
		t.Fatalf("reset: %v\n%s", err, out)
	}
	for _, bad := range [][]string{{"--set", "apps=1"}, {"--set", "concurrent_builds=0"}, {"--reset", "nope"}} {
		if _, err := runAdmin(t, append([]string{"team", "quota", team.Slug}, bad...)...); err == nil || !strings.Contains(err.Error(), "quota_") {
			t.Errorf("%v: %v, want an error naming the code", bad, err)
		}
	}
	if _, err := runAdmin(t, "team", "quota", "no-such-team"); err == nil || !strings.Contains(err.Error(), "team_not_found") {
		t.Errorf("unknown team: %v", err)
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// adminTestStore is a migrated store on a fresh database that the admin
// commands reach through DATABASE_URL (set here, so callers are not
// parallel).
func adminTestStore(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	dbURL := storetest.NewDatabaseURL(t)
	t.Setenv(config.EnvConfigPath, "")
	t.Setenv("DATABASE_URL", dbURL)
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return store.New(pool)
}
