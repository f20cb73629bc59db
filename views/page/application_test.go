package page

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/slipwayhq/slipway/views"
	"github.com/slipwayhq/slipway/views/partial"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestApplicationPages_Golden pins the application pages' markup (tabs,
// overview, deployment timeline, editor) so a layout change shows up in
// review as a golden diff.
func TestApplicationPages_Golden(t *testing.T) {
	t.Parallel()
	dev := views.Request{CSRF: "csrf-token-value", Team: views.TeamRef{ID: "team_a", Name: "Acme", Role: "developer"},
		Scopes: map[string]bool{"apps:read": true, "apps:write": true, "apps:deploy": true, "logs:read": true}}
	header := AppHeader{ID: "app_1", Name: "shop", Revision: 2}
	running := partial.DeploymentView{
		ID: "dep_1", ApplicationID: "app_1", Environment: "production", State: "rolling_out", Revision: 2,
		Origin: "build", Actor: "dev@example.com", Created: "2026-01-02 03:04 UTC", Elapsed: "1m05s", Retryable: true,
		Steps: []partial.StepView{
			{Name: "capture", Label: "Capturing", State: "succeeded", Elapsed: "120ms"},
			{Name: "job:migrate", Label: "Running job migrate", State: "succeeded", Output: "applied 3 migrations", Elapsed: "14s"},
			{Name: "rollout:web", Label: "Rolling out web", State: "running", Message: "1 of 2 replicas healthy", Elapsed: "51s"},
		},
	}
	overview := []EnvironmentView{{
		ID: "env_1", Name: "production", State: "deploying", Latest: &running, Live: true,
		Services: []ServiceRow{{Name: "web", Replicas: "2", Running: "1", Health: "starting", Image: "registry.example/shop:2",
			LogsURL: "/applications/app_1/environments/production/services/web/logs", RunningImage: "sha256:0123456789ab", Started: "2026-01-02 03:05 UTC", Restarts: "1"}},
		Routes: []RouteRow{{Hostname: "shop.example.com", URL: "https://shop.example.com/", Target: "web:8080"}},
	}, {ID: "env_2", Name: "staging", State: "stopped", PromoteFrom: ""}}
	editor := partial.EditorView{
		ApplicationID: "app_1", ExpectedRevision: 2, Source: "api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\nreplicaz = 2\n",
		Errors:  []partial.ManifestErrorView{{Line: 3, Column: 1, Path: "replicaz", Code: "unknown_field", Message: "unknown field `replicaz`"}},
		CanSave: true, CanDeploy: true,
	}
	planned := editor
	planned.Errors = nil
	planned.Plan = &partial.PlanView{Text: "Changes:\n  ~ services.web.replicas: 2 -> 3\n", Against: 2, Hashes: []partial.PlanHashView{{
		Environment: "production", SpecHash: "5eca1f00aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff",
		Deployed: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Changed: true,
		Services: []partial.PlanServiceHashView{
			{Name: "web", Hash: "aaaaaaaaaaaa1111", Deployed: "bbbbbbbbbbbb2222", Change: "changed"},
			{Name: "worker", Hash: "cccccccccccc3333", Deployed: "cccccccccccc3333", Change: "unchanged"},
		},
	}, {Environment: "staging", Unknown: "it uses deployment.id or an unpinned git.sha, known only when deploying"}}}
	tests := []struct {
		name string
		c    templ.Component
	}{
		{"application_manifest_plan", ApplicationManifest(withTab(header, "manifest"), ManifestView{Editor: planned})},
		{"application_overview", ApplicationOverview(withTab(header, "overview"), overview)},
		{"deployment_detail", DeploymentDetail(withTab(header, "deployments"), withLogs(running))},
		{"application_manifest", ApplicationManifest(withTab(header, "manifest"), ManifestView{Editor: editor,
			Revisions: []RevisionRow{{Revision: 2, Author: "dev@example.com", Created: "2026-01-02 03:00 UTC"}, {Revision: 1, Author: "dev@example.com", Created: "2026-01-01 03:00 UTC"}}})},
		{"application_environments", ApplicationEnvironments(withTab(header, "environments"), EnvironmentsTab{Envs: overview,
			Errors: map[string]string{"settings:staging": "spec.environments.staging.visibility: must be public or private (invalid_value)"},
			Scopes: []VariableScope{
				{Key: "", Label: "Defaults", Rows: []VariableRow{{Name: "web_replicas", Value: "2", Type: "integer"}}},
				{Key: "env:production", Label: "production", Error: "value: type a whole number such as 3, or choose the text type (not_an_integer)"},
				{Key: "previews", Label: "Every preview"},
			}})},
		{"application_previews", ApplicationPreviews(withTab(header, "previews"), PreviewsTab{Rows: []PreviewRow{
			{Slug: "shop-feat-login", Branch: "feat/login", State: "running", URL: "https://shop-feat-login.preview.example.com/", Deployment: "dep_9", Revision: 2, Deployed: "2026-01-02 03:04 UTC"},
			{Slug: "shop-fix", Branch: "fix", State: "deleting"},
		}, Visibility: "private"})},
		{"environment_daytwo", EnvironmentDayTwo(withTab(header, "environments"), dayTwoView())},
		{"service_logs", ServiceLogs(withTab(header, "overview"), partial.ServiceLogsView{URL: "/applications/app_1/environments/production/services/web/logs",
			DownloadURL: "/applications/app_1/environments/production/services/web/logs/download", Environment: "production", Service: "web",
			StreamURL: "/applications/app_1/environments/production/services/web/logs/stream", Tail: 500, Since: "2026-01-02T03:04:05.000000002Z",
			Lines: []partial.LogLineView{
				{Time: "2026-01-02T03:04:05.000000001Z", Clock: "03:04:05.000", Task: "web.1", Node: "node-a", Text: "listening on :8080"},
				{Time: "2026-01-02T03:04:05.000000002Z", Clock: "03:04:05.000", Task: "web.2", Node: "node-b", Stderr: true, Text: "GET / 500"},
			}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.c.Render(views.WithRequest(context.Background(), dev), &buf); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.name+".golden.html")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./views/page -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("%s differs from %s; if intended, run go test ./views/page -update\ngot:\n%s", tt.name, path, buf.String())
			}
		})
	}
}

func withTab(h AppHeader, tab string) AppHeader {
	h.Tab = tab
	return h
}

func withLogs(d partial.DeploymentView) partial.DeploymentView {
	d.Logs = []partial.LogLink{{Service: "web", URL: "/applications/app_1/environments/production/services/web/logs"}}
	return d
}

// dayTwoView is a staging environment with a scheduled job and a
// scheduled backup, a failed run, a queued and a succeeded backup and a
// restore holding it stopped.
func dayTwoView() DayTwo {
	done := RestoreRow{ID: "rst_1", BackupID: "bak_1", State: "failed", Message: "archive checksum mismatch"}
	return DayTwo{
		Environment: "staging", Base: "/applications/app_1/environments/staging/daytwo", Target: "directory",
		Schedules: []ScheduleRow{
			{Kind: "job", Name: "report", Spec: "0 3 * * *", Next: "2026-01-03 03:00:00 UTC", Last: "2026-01-02 03:00:00 UTC", Job: true},
			{Kind: "backup", Name: "nightly", Spec: "@daily", Next: "2026-01-03 00:00:00 UTC", Last: "–"},
		},
		Runs: []JobRunRow{{ID: "run_1", Job: "report", Origin: "scheduled", State: "failed", Started: "2026-01-02 03:00:00 UTC",
			Ended: "2026-01-02 03:00:02 UTC", Exit: "1", Output: "report: no rows\n", Message: "exit code 1"}},
		Backups: []BackupRow{
			{ID: "bak_2", Kind: "volume", Subject: "uploads", Origin: "manual", State: "queued", Taken: "2026-01-02 03:00:02 UTC"},
			{ID: "bak_1", Kind: "postgres", Subject: "db", Origin: "scheduled", State: "succeeded", SizeBytes: 4096,
				SHA256: strings.Repeat("ab", 32), Taken: "2026-01-02 03:00:00 UTC", Restorable: true},
		},
		Restores: []RestoreRow{done}, Hold: &done,
		Volumes: []string{"uploads"}, Postgres: []string{"db"},
	}
}
