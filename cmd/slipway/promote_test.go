package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

const promoteManifest = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "promonotes"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "example.com/notes:1"
[spec.services.environment]
ORIGIN = "https://${{ env.name }}.example"

[spec.environments.staging]
[spec.environments.production]
promote_from = "staging"
`

// succeedWithCapture finishes a requested build deployment as the worker
// would, capturing the saved revision rendered for its environment.
func (s *cliServer) succeedWithCapture(t *testing.T, id string) {
	t.Helper()
	ctx, team := context.Background(), s.team.ID
	d, err := s.st.GetDeployment(ctx, team, id)
	if err != nil {
		t.Fatal(err)
	}
	env, err := s.st.GetEnvironment(ctx, team, d.EnvironmentID)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.st.GetManifestRevision(ctx, team, d.ApplicationID, d.Revision)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode(rev.Manifest, "json")
	if err != nil {
		t.Fatal(err)
	}
	rendered, errs := manifest.Render(m, manifest.RenderContext{Environment: env.Name, Slug: env.Slug})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	renderedJSON, _ := json.Marshal(rendered)
	move := func(from, to store.DeploymentState) {
		t.Helper()
		if _, err := s.st.TransitionDeployment(ctx, team, id, []store.DeploymentState{from}, to); err != nil {
			t.Fatal(err)
		}
	}
	move(store.StateRequested, store.StateCapturing)
	if _, err := s.st.RecordCapture(ctx, team, id, store.Capture{Manifest: rev.Manifest, Rendered: renderedJSON, Variables: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	steps := `[{"name":"capture","state":"succeeded"},{"name":"prepare","state":"succeeded","detail":{"web":"example.com/notes:1"}}]`
	if err := s.st.SetDeploymentSteps(ctx, team, id, []byte(steps)); err != nil {
		t.Fatal(err)
	}
	move(store.StateCapturing, store.StatePreparing)
	move(store.StatePreparing, store.StateRollingOut)
	move(store.StateRollingOut, store.StateSucceeded)
}

func TestCLI_PromoteReleasesAndSource(t *testing.T) {
	s := startCLIServer(t)
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, promoteManifest)); code != 0 {
		t.Fatalf("apply: %d %s", code, stderr)
	}
	_, stderr, code := runCLI(t, "env", "promote", "promonotes", "production")
	if code == 0 || !strings.Contains(stderr, "promotion_source_not_ready") {
		t.Fatalf("promotion without a source deployment: %d %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "env", "deploy", "promonotes", "production")
	if code == 0 || !strings.Contains(stderr, "environment_promoted") {
		t.Fatalf("deploying a promoted environment: %d %q", code, stderr)
	}

	stdout, stderr, code := runCLI(t, "env", "deploy", "promonotes", "staging")
	if code != 0 {
		t.Fatalf("deploy staging: %d %s", code, stderr)
	}
	built := deploymentIDIn(t, stdout)
	s.succeedWithCapture(t, built)

	stdout, stderr, code = runCLI(t, "env", "promote", "promonotes", "production", "--plan")
	if code != 0 || !strings.Contains(stdout, "promotion from staging's current deployment "+built) ||
		!strings.Contains(stdout, "added services.web") || strings.Contains(stdout, "queued") {
		t.Fatalf("plan: %d\n%s\n%s", code, stdout, stderr)
	}
	if latest := s.nextDeployment(t, ""); latest != built {
		t.Fatalf("a plan requested deployment %s", latest)
	}

	_, stderr, code = runCLI(t, "env", "promote", "promonotes", "production", "--deployment", "dep_reviewed_earlier")
	if code == 0 || !strings.Contains(stderr, "promotion_source_changed") {
		t.Fatalf("stale --deployment: %d %q", code, stderr)
	}
	stdout, stderr, code = runCLI(t, "env", "promote", "promonotes", "production", "--deployment", built)
	if code != 0 || !strings.Contains(stdout, "queued") {
		t.Fatalf("promote: %d\n%s\n%s", code, stdout, stderr)
	}
	promoted := deploymentIDIn(t, stdout[strings.LastIndex(stdout, "deployment dep_"):])

	stdout, _, code = runCLI(t, "app", "releases", "promonotes")
	if code != 0 || !strings.Contains(stdout, built) || !strings.Contains(stdout, "production ("+promoted+", requested)") {
		t.Fatalf("releases: %d\n%s", code, stdout)
	}

	_, stderr, code = runCLI(t, "env", "source", "promonotes", "production", "--tracking")
	if code == 0 || !strings.Contains(stderr, "environment_declared") {
		t.Fatalf("source of a declared environment: %d %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "env", "source", "promonotes", "production")
	if code == 0 || !strings.Contains(stderr, "environment_source_conflict") {
		t.Fatalf("source without a choice: %d %q", code, stderr)
	}
}
