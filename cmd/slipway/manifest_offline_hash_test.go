package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

const planHashManifest = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "shop"

[[spec.services]]
name = "api"
[spec.services.source]
type = "image"
image = "registry.example/api:1"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "registry.example/web:1"
`

// TestAppPlan_SpecHash: app plan shows the spec hash deploying the file
// would record (the one the pipeline computes from the rendered
// manifest) and marks the one service whose hash changes.
func TestAppPlan_SpecHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oldFile, newFile := filepath.Join(dir, "old.toml"), filepath.Join(dir, "new.toml")
	next := strings.Replace(planHashManifest, "registry.example/web:1", "registry.example/web:2", 1)
	if err := os.WriteFile(oldFile, []byte(planHashManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(newFile, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	// What a deployment of new.toml to production records.
	m, err := manifest.Decode([]byte(next), "toml")
	if err != nil {
		t.Fatal(err)
	}
	rendered, errs := manifest.Render(m, manifest.DeploymentContext(manifest.Target{Name: "production"}, "dep_x", "", ""))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want, err := manifest.SpecHash(rendered, nil)
	if err != nil {
		t.Fatal(err)
	}
	web, _ := manifest.ServiceHash(rendered, "web", nil)

	out, stderr, code := runOfflineCLI(t, "app", "plan", "--file", newFile, "--against", oldFile)
	if code != 0 {
		t.Fatalf("code %d: %s", code, stderr)
	}
	for _, line := range []string{"\nSpec hash:\n  production: " + want + " (changes from ", "    ~ web " + web[:12] + " (was ", "    = api "} {
		if !strings.Contains(out, line) {
			t.Errorf("plan lacks %q:\n%s", line, out)
		}
	}

	out, _, code = runOfflineCLI(t, "app", "plan", "--file", newFile, "--format", "json")
	var plan manifest.Plan
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 0 {
		t.Fatalf("json plan: code %d, %v\n%s", code, err, out)
	}
	if len(plan.Hashes) != 1 || plan.Hashes[0].Environment != "production" || plan.Hashes[0].SpecHash != want || !plan.Hashes[0].Changed {
		t.Fatalf("hashes without --against = %+v, want production %s", plan.Hashes, want)
	}
	for _, s := range plan.Hashes[0].Services {
		if s.Change != manifest.HashAdded || s.SpecHash == "" {
			t.Errorf("service %+v: a new application's services are added, with their hash", s)
		}
	}
}
