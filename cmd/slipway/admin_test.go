package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func writeKey(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runAdmin(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"admin"}, args...))
	err := root.Execute()
	return out.String(), err
}

// Sets the process environment: not parallel.
func TestAdminRotateKeyCommand(t *testing.T) {
	ctx := context.Background()
	url := storetest.NewDatabaseURL(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := store.New(pool)

	dir := t.TempDir()
	oldText, _ := keyring.Generate()
	newText, _ := keyring.Generate()
	oldFile := writeKey(t, dir, "old.key", oldText)
	newFile := writeKey(t, dir, "new.key", newText)
	oldKR, _ := keyring.Parse([]byte(oldText))
	newKR, _ := keyring.Parse([]byte(newText))

	team, err := st.CreateTeam(ctx, "ops", "ops")
	if err != nil {
		t.Fatal(err)
	}
	app, err := st.CreateApplication(ctx, team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	env, err := st.CreateEnvironment(ctx, team.ID, store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "notes-production"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.New(st, oldKR).Set(ctx, team.ID, app.ID, "api-key", []byte("the-value"), "user:x"); err != nil {
		t.Fatal(err)
	}
	m := &manifest.Manifest{Spec: manifest.Spec{Services: []manifest.Service{{Name: "web", Secrets: []manifest.SecretMount{{Name: "api-key", Target: "/run/secrets/api-key"}}}}}}
	pins, err := secrets.New(st, oldKR).Capture(ctx, team.ID, env, m)
	if err != nil {
		t.Fatal(err)
	}

	t.Setenv(config.EnvConfigPath, "")
	t.Setenv("DATABASE_URL", url)
	t.Setenv(keyring.EnvKey, "")

	// No key configured: refused, nothing touched.
	t.Setenv(keyring.EnvKeyFile, "")
	_, err = runAdmin(t, "rotate-key", "--new-key-file", newFile)
	if !errors.Is(err, keyring.ErrKeyMissing) {
		t.Fatalf("rotate-key without a configured key: %v", err)
	}

	t.Setenv(keyring.EnvKeyFile, oldFile)
	out, err := runAdmin(t, "rotate-key", "--new-key-file", newFile)
	if err != nil {
		t.Fatalf("rotate-key: %v\n%s", err, out)
	}
	if !strings.Contains(out, "re-encrypted 1 value under key "+newKR.CurrentID()) {
		t.Fatalf("output = %q", out)
	}
	if strings.Contains(out, "the-value") {
		t.Fatal("the command printed a value")
	}
	// The new key alone opens the value now; the old one is not needed.
	vals, err := secrets.New(st, newKR).Values(ctx, team.ID, env, pins)
	if err != nil || string(vals["api-key"].Value) != "the-value" {
		t.Fatalf("after rotation: %v", err)
	}
	counts, err := st.CountSealedByKey(ctx)
	if err != nil || counts[oldKR.CurrentID()] != 0 {
		t.Fatalf("counts = %v, %v", counts, err)
	}
	// Again, with the new key configured: nothing left to do.
	t.Setenv(keyring.EnvKeyFile, writeKey(t, dir, "both.key", newText, oldText))
	out, err = runAdmin(t, "rotate-key")
	if err != nil || !strings.Contains(out, "re-encrypted 0 values") {
		t.Fatalf("second rotation: %v %q", err, out)
	}
}
