package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func TestCLI_EnvDelete(t *testing.T) {
	s := startCLIServer(t)
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, promoteManifest)); code != 0 {
		t.Fatalf("apply: %d %s", code, stderr)
	}
	ctx := context.Background()
	app, err := s.st.GetApplicationByName(ctx, s.team.ID, "promonotes")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.CreateEnvironment(ctx, s.team.ID, store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "qa", Slug: "qa"}); err != nil {
		t.Fatal(err)
	}

	if _, stderr, code := runCLI(t, "env", "delete", "promonotes", "qa"); code == 0 || !strings.Contains(stderr, "confirmation_required") {
		t.Fatalf("delete without --yes: exit %d, stderr %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "env", "delete", "promonotes", "staging", "--yes"); code == 0 || !strings.Contains(stderr, "environment_declared") {
		t.Fatalf("delete of a declared environment: exit %d, stderr %s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "env", "delete", "promonotes", "qa", "--yes")
	if code != 0 || !strings.Contains(stdout, "Named volumes are retained") {
		t.Fatalf("delete qa: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if _, err := s.st.GetEnvironmentByName(ctx, s.team.ID, app.ID, "qa"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("qa after delete: %v", err)
	}
}
