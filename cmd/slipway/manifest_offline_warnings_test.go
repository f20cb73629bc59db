package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// receiverByVariable is a telemetry receiver with a writable volume whose
// rollout order comes from a variable only production sets to start-first.
const receiverByVariable = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "notes"

[spec.variables]
order = "stop-first"

[[spec.services]]
name = "web"
receives_telemetry = true
[spec.services.source]
type = "image"
image = "example.com/notes:1"
[[spec.services.mounts]]
volume = "data"
target = "/data"
[spec.services.rollout]
order = "${{ vars.order }}"

[[spec.volumes]]
name = "data"

[spec.environments.staging]
[spec.environments.production.variables]
order = "start-first"
`

// TestAppPlan_OfflineWarnings: the offline plan renders each environment
// with its own variables, as the server's plan does, so start-first with a
// writable volume is flagged for production only; and a telemetry
// receiver gets a note that grants are the server's to check.
func TestAppPlan_OfflineWarnings(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "app.toml")
	if err := os.WriteFile(file, []byte(receiverByVariable), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runOfflineCLI(t, "app", "plan", "--file", file, "--format", "json")
	var plan manifest.Plan
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 0 {
		t.Fatalf("plan: code %d, %v\n%s%s", code, err, out, stderr)
	}
	var rollout, grants []manifest.FieldError
	for _, w := range plan.Warnings {
		switch w.Code {
		case "rollout_start_first_writable_volume":
			rollout = append(rollout, w)
		case CodeTelemetryGrantUnchecked:
			grants = append(grants, w)
		}
	}
	if len(rollout) != 1 || rollout[0].Path != "spec.services[0].rollout.order" || !strings.HasPrefix(rollout[0].Message, "environment production: ") {
		t.Errorf("rollout warnings %+v, want one for production", rollout)
	}
	if len(grants) != 1 || grants[0].Path != "spec.services[0].receives_telemetry" || !strings.Contains(grants[0].Message, "telemetry_not_granted") {
		t.Errorf("telemetry notes %+v, want one on web", grants)
	}

	text, _, code := runOfflineCLI(t, "app", "plan", "--file", file)
	if code != 0 || !strings.Contains(text, "grants are kept by the server") {
		t.Errorf("text plan (code %d) lacks the grant note:\n%s", code, text)
	}
	// Without a receiver or an environment choosing start-first: neither.
	plain := strings.NewReplacer("receives_telemetry = true\n", "", `order = "start-first"`, `order = "stop-first"`).Replace(receiverByVariable)
	if err := os.WriteFile(file, []byte(plain), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runOfflineCLI(t, "app", "plan", "--file", file, "--format", "json")
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.Warnings) != 0 {
		t.Errorf("plain manifest: warnings %+v, %v", plan.Warnings, err)
	}
}
