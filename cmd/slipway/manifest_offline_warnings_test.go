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
// rollout order comes from a variable only production sets to start-first
// (the fixture app/service's plan-warning tests read, made a receiver).
func receiverByVariable(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../manifest/testdata/warnings/rollout_by_variable.toml")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(data), "name = \"web\"\n", "name = \"web\"\nreceives_telemetry = true\n", 1)
}

// TestAppPlan_OfflineWarnings: the offline plan renders each environment
// with its own variables, as the server's plan does, so start-first with a
// writable volume is flagged for production only (and, set in
// [spec.previews], for previews); and a telemetry receiver gets a note
// that grants are the server's to check.
func TestAppPlan_OfflineWarnings(t *testing.T) {
	t.Parallel()
	receiver := receiverByVariable(t)
	file := filepath.Join(t.TempDir(), "app.toml")
	if err := os.WriteFile(file, []byte(receiver), 0o600); err != nil {
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
	plain := strings.NewReplacer("receives_telemetry = true\n", "", `order = "start-first"`, `order = "stop-first"`).Replace(receiver)
	if err := os.WriteFile(file, []byte(plain), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runOfflineCLI(t, "app", "plan", "--file", file, "--format", "json")
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.Warnings) != 0 {
		t.Errorf("plain manifest: warnings %+v, %v", plan.Warnings, err)
	}
	// Previews render with [spec.previews] variables: start-first there
	// is flagged for previews, and for no environment.
	previews := plain + "[spec.previews.variables]\norder = \"start-first\"\n"
	if err := os.WriteFile(file, []byte(previews), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runOfflineCLI(t, "app", "plan", "--file", file, "--format", "json")
	var previewPlan manifest.Plan
	if err := json.Unmarshal([]byte(out), &previewPlan); err != nil {
		t.Fatalf("previews plan: %v\n%s", err, out)
	}
	if ws := previewPlan.Warnings; len(ws) != 1 || ws[0].Code != "rollout_start_first_writable_volume" || !strings.HasPrefix(ws[0].Message, "preview ") {
		t.Errorf("previews plan warnings %+v, want start-first for previews only", ws)
	}
}
