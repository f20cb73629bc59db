package manifest_test

import (
	"reflect"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

func TestApplyDefaults(t *testing.T) {
	t.Parallel()
	doc := header + `
[[spec.volumes]]
name = "data"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "GHCR.io/example/web:1"
[spec.services.healthcheck]
type = "http"
port = 80
[[spec.services.files]]
target = "/etc/motd"
content = "hi"
[[spec.services.mounts]]
volume = "data"
target = "/data"

[[spec.services]]
name = "built"
replicas = "${{ vars.n }}"
[spec.services.source]
type = "git"
repository = { url = "https://example.com/a.git", branch = "main" }
build = { type = "docker" }
[spec.services.healthcheck]
type = "command"
command = ["true"]
[spec.services.rollout]
monitor_seconds = 5

[[spec.routes]]
hostname = "App.Example.com."
service = "web"
port = 80
[[spec.routes]]
hostname = "www.example.com"
redirect = { to = "https://app.example.com" }

[[spec.jobs]]
name = "migrate"
service = "web"

[[spec.secrets]]
name = "token"
generate = { type = "random", bytes = 32 }
[[spec.secrets]]
name = "key"
generate = { type = "rsa", bits = 2048 }

[spec.variables]
n = 2
[spec.environments.staging]
[spec.environments.production]
promote_from = "staging"
[spec.previews]

[spec.manifest]
path = "app.toml"
sync = { mode = "poll" }
repository = { url = "https://example.com/a.git", branch = "main" }
`
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	manifest.ApplyDefaults(m)
	web, built := m.Spec.Services[0], m.Spec.Services[1]
	checks := []struct {
		name      string
		got, want any
	}{
		{"replicas", web.Replicas.N, int64(1)},
		{"replicas reference kept", built.Replicas.Ref, "${{ vars.n }}"},
		{"image registry lowercased", web.Source.Image, "ghcr.io/example/web:1"},
		{"health path", web.Healthcheck.Path, "/health"},
		{"command check has no path", built.Healthcheck.Path, ""},
		{"interval", web.Healthcheck.IntervalSeconds.N, int64(10)},
		{"timeout", web.Healthcheck.TimeoutSeconds.N, int64(3)},
		{"start period", web.Healthcheck.StartPeriodSeconds.N, int64(0)},
		{"retries", web.Healthcheck.Retries.N, int64(3)},
		{"monitor", web.Rollout.MonitorSeconds.N, int64(30)},
		{"explicit monitor kept", built.Rollout.MonitorSeconds.N, int64(5)},
		{"order left derived", web.Rollout.Order, ""},
		{"file mode", web.Files[0].Mode, "0444"},
		{"dockerfile", built.Source.Build.Dockerfile, "Dockerfile"},
		{"context", built.Source.Build.Context, "."},
		{"hostname normalized", m.Spec.Routes[0].Hostname, "app.example.com"},
		{"route visibility", m.Spec.Routes[0].Visibility, "private"},
		{"redirect status", m.Spec.Routes[1].Redirect.Status, 308},
		{"preserve path", *m.Spec.Routes[1].Redirect.PreservePath, true},
		{"job run", m.Spec.Jobs[0].Run, "before-rollout"},
		{"job timeout", m.Spec.Jobs[0].TimeoutSeconds.N, int64(300)},
		{"job volume access", m.Spec.Jobs[0].VolumeAccess, "read-only"},
		{"random encoding", m.Spec.Secrets[0].Generate.Encoding, "hex"},
		{"rsa has no encoding", m.Spec.Secrets[1].Generate.Encoding, ""},
		{"environment visibility", m.Spec.Environments["staging"].Visibility, "public"},
		{"preview visibility", m.Spec.Previews.Visibility, "private"},
		{"sync interval", m.Spec.Manifest.Sync.IntervalSeconds, 300},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if o, derived := manifest.EffectiveRolloutOrder(&web); o != manifest.RolloutStopFirst || !derived {
		t.Errorf("web order = %s derived %v, want derived stop-first (writable mount)", o, derived)
	}
	if o, derived := manifest.EffectiveRolloutOrder(&built); o != manifest.RolloutStartFirst || !derived {
		t.Errorf("built order = %s derived %v, want derived start-first", o, derived)
	}
	if r := manifest.EffectiveRollback(m.Spec.Environments["production"]); r != manifest.RollbackAutomatic {
		t.Errorf("promoted rollback = %s", r)
	}
	if r := manifest.EffectiveRollback(m.Spec.Environments["staging"]); r != manifest.RollbackManual {
		t.Errorf("staging rollback = %s", r)
	}
	// Idempotent, and the result still validates.
	twice, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	manifest.ApplyDefaults(twice)
	manifest.ApplyDefaults(twice)
	if !reflect.DeepEqual(twice, m) {
		t.Error("ApplyDefaults is not idempotent")
	}
	if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) != 0 {
		t.Errorf("defaulted manifest is invalid:\n%s", manifest.FormatText(errs))
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	doc := header + `
[[spec.volumes]]
name = "data"
[[spec.services]]
name = "db"
rollout = { order = "start-first" }
[spec.services.source]
type = "image"
image = "postgres:16"
[[spec.services.mounts]]
volume = "data"
target = "/data"
[[spec.services]]
name = "backup"
[spec.services.source]
type = "image"
image = "backup:1"
[[spec.services.mounts]]
volume = "data"
target = "/data"
read_only = true
[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "web:1"
[[spec.services]]
name = "collector"
receives_telemetry = true
rollout = { order = "start-first" }
[spec.services.source]
type = "image"
image = "otel:1"
[[spec.routes]]
hostname = "a.example.com"
service = "web"
port = 80
[[spec.jobs]]
name = "compact"
service = "db"
volume_access = "exclusive"
[[spec.jobs]]
name = "migrate"
service = "web"
stop_service = true
[spec.environments.staging]
[spec.environments.production]
promote_from = "staging"
`
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	matchErrors(t, manifest.Warnings(m), []wantError{
		{path: "spec.services[0].rollout.order", code: "rollout_start_first_writable_volume", message: "data"},
		{path: "spec.services[2].healthcheck", code: "rollback_without_health_check", message: "production"},
		{path: "spec.services[3].rollout.order", code: "rollout_start_first_writable_volume", message: "telemetry"},
		{path: "spec.jobs[0]", code: "job_stops_services", message: "stops backup, db"},
		{path: "spec.jobs[1]", code: "job_stops_services", message: "stops web"},
	})
	// Without automatic rollback there is nothing to warn about routes.
	delete(m.Spec.Environments, "production")
	for _, w := range manifest.Warnings(m) {
		if w.Code == "rollback_without_health_check" {
			t.Errorf("unexpected %v", w)
		}
	}
}
