package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func TestCLI_EnvCreateAndRename(t *testing.T) {
	s := startCLIServer(t)
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, promoteManifest)); code != 0 {
		t.Fatalf("apply: %d %s", code, stderr)
	}
	ctx := context.Background()
	app, err := s.st.GetApplicationByName(ctx, s.team.ID, "promonotes")
	if err != nil {
		t.Fatal(err)
	}

	if stdout, stderr, code := runCLI(t, "env", "create", "promonotes", "qa"); code != 0 || !strings.Contains(stdout, "environment qa created") {
		t.Fatalf("create qa: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if _, stderr, code := runCLI(t, "env", "create", "promonotes", "staging"); code == 0 || !strings.Contains(stderr, "environment_declared") {
		t.Fatalf("create of a declared name: exit %d, stderr %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "env", "rename", "promonotes", "qa", "staging"); code == 0 || !strings.Contains(stderr, "environment_declared") {
		t.Fatalf("rename to a declared name: exit %d, stderr %s", code, stderr)
	}
	qa, err := s.st.GetEnvironmentByName(ctx, s.team.ID, app.ID, "qa")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "env", "rename", "promonotes", "qa", "testing")
	if code != 0 || !strings.Contains(stdout, "qa renamed to testing") {
		t.Fatalf("rename qa: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if _, err := s.st.GetEnvironmentByName(ctx, s.team.ID, app.ID, "qa"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("qa after rename: %v", err)
	}
	renamed, err := s.st.GetEnvironmentByName(ctx, s.team.ID, app.ID, "testing")
	if err != nil || renamed.ID != qa.ID {
		t.Fatalf("testing after rename: %+v %v, want id %s", renamed, err, qa.ID)
	}
}
