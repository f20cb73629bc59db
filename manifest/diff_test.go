package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFormatPlan_Golden plans every testdata/diff/<case>: new.toml against
// old.toml (a new application when there is none).
func TestFormatPlan_Golden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/diff/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			next := decodeTestFile(t, filepath.Join(dir, "new.toml"))
			if errs := Validate(next, ValidateOptions{}); len(errs) > 0 {
				t.Fatalf("new.toml is invalid: %v", errs)
			}
			var prev *Manifest
			if _, err := os.Stat(filepath.Join(dir, "old.toml")); err == nil {
				prev = decodeTestFile(t, filepath.Join(dir, "old.toml"))
				if errs := Validate(prev, ValidateOptions{}); len(errs) > 0 {
					t.Fatalf("old.toml is invalid: %v", errs)
				}
			}
			plan := NewPlan(prev, next, nil)
			plan.Warnings = Warnings(next)
			checkGolden(t, filepath.Join(dir, "plan.golden"), []byte(FormatPlan(plan)))
		})
	}
}

func TestDiff_Redacts(t *testing.T) {
	t.Parallel()
	old := decodeTestFile(t, "testdata/diff/services/old.toml")
	next := decodeTestFile(t, "testdata/diff/services/new.toml")
	out := FormatPlan(NewPlan(old, next, nil))
	for _, secret := range []string{"hunter2", "correct-horse", "--verbose", "hello, world", "migrate --all", "\"--all\""} {
		if strings.Contains(out, secret) {
			t.Errorf("plan shows %q:\n%s", secret, out)
		}
	}
	// Variable values are not secret.
	for _, shown := range []string{"variables.domain: notes.example.com -> notes.example.org", "ghcr.io/example/notes:1.5.0"} {
		if !strings.Contains(out, shown) {
			t.Errorf("plan does not show %q:\n%s", shown, out)
		}
	}
	// An environment value that is exactly one reference shows as written:
	// the reference is no secret, and variable values are not either.
	a, b := baseManifest(), baseManifest()
	a.Spec.Services[0].Environment = map[string]string{"HOST": "${{ vars.domain }}"}
	b.Spec.Services[0].Environment = map[string]string{"HOST": "${{ app.name }}"}
	want := []Change{{Path: "services.web.environment.HOST", Kind: ChangeChanged, Before: "${{ vars.domain }}", After: "${{ app.name }}"}}
	if got := Diff(a, b); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff = %+v, want %+v", got, want)
	}
}

func TestDiff_Paths(t *testing.T) {
	t.Parallel()
	old := decodeTestFile(t, "testdata/diff/services/old.toml")
	next := decodeTestFile(t, "testdata/diff/services/new.toml")
	got := map[string]string{}
	for _, c := range Diff(old, next) {
		got[c.Path] = c.Kind
	}
	want := map[string]string{
		"services.web.replicas":                 ChangeChanged,
		"services.web.command":                  ChangeChanged,
		"services.web.environment.DATABASE_URL": ChangeChanged,
		"services.web.files./etc/notes/motd":    ChangeChanged,
		"services.web.files./etc/notes/banner":  ChangeAdded,
		"services.web.rollout.order":            ChangeAdded,
		"services.worker":                       ChangeRemoved,
		"services.postgres.healthcheck.command": ChangeAdded,
		"jobs.order":                            ChangeChanged,
		"jobs.migrate.command":                  ChangeChanged,
		"jobs.migrate.timeout_seconds":          ChangeChanged,
		"secrets.database-password":             ChangeChanged,
		"routes.${{ vars.domain }}.port":        ChangeChanged,
		"routes.old.notes.example.com":          ChangeRemoved,
		"variables.domain":                      ChangeChanged,
	}
	for path, kind := range want {
		if got[path] != kind {
			t.Errorf("%s: kind %q, want %q", path, got[path], kind)
		}
	}
	for _, unchanged := range []string{"services.web.environment.RUST_LOG", "services.web.depends_on", "jobs.seed.command", "volumes.data"} {
		if _, ok := got[unchanged]; ok {
			t.Errorf("%s listed as changed", unchanged)
		}
	}
}

func TestDiff_Identical(t *testing.T) {
	t.Parallel()
	a := decodeTestFile(t, "testdata/hash/notes.toml")
	b := decodeTestFile(t, "testdata/hash/notes-reordered.toml")
	// Only the manifest connection differs: the reordering, the explicit
	// defaults and the api_version are no change.
	var paths []string
	for _, c := range Diff(a, b) {
		paths = append(paths, c.Path)
	}
	want := []string{"manifest.path", "manifest.repository", "manifest.sync.mode"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("Diff = %q, want %q", paths, want)
	}
	if c := Diff(nil, nil); len(c) != 0 {
		t.Fatalf("Diff(nil, nil) = %v", c)
	}
}

func TestEnvironmentsSummary(t *testing.T) {
	t.Parallel()
	repo := func(m *Manifest) *Manifest {
		m.Spec.Manifest = &ManifestSource{Path: "app.toml", Repository: &Repository{URL: "https://example.com/r.git", Branch: "main"}}
		return m
	}
	yes := true
	tests := []struct {
		name     string
		old, new *Manifest
		existing []ExistingEnvironment
		want     []string
	}{
		{
			name: "new application without declarations",
			new:  baseManifest(),
			want: []string{"+ production: created, deploys from the saved manifest"},
		},
		{
			name: "new repository application declaring two",
			new: repo(func() *Manifest {
				m := baseManifest()
				m.Spec.Environments = map[string]EnvironmentBlock{"staging": {Sync: &yes}, "production": {PromoteFrom: "staging"}}
				return m
			}()),
			want: []string{
				"+ production: created, deploys from releases promoted from staging",
				"+ staging: created, deploys from branch main, follows pushes",
			},
		},
		{
			name: "block without source keeps the existing source",
			old:  baseManifest(),
			new: repo(func() *Manifest {
				m := baseManifest()
				m.Spec.Environments = map[string]EnvironmentBlock{"production": {Visibility: "private"}}
				return m
			}()),
			existing: []ExistingEnvironment{{Name: "production", Branch: "release"}},
		},
		{
			name: "pinned commit",
			old:  repo(baseManifest()),
			new: repo(func() *Manifest {
				m := baseManifest()
				m.Spec.Environments = map[string]EnvironmentBlock{"production": {Commit: "0123456789012345678901234567890123456789"}}
				return m
			}()),
			existing: []ExistingEnvironment{{Name: "production", Branch: "main", Sync: true}},
			want:     []string{"~ production: deploys from branch main pinned at commit 012345678901 instead of branch main, no longer follows pushes"},
		},
		{
			name: "undeclared environment is kept",
			old: func() *Manifest {
				m := baseManifest()
				m.Spec.Environments = map[string]EnvironmentBlock{"qa": {}, "production": {}}
				return m
			}(),
			new: func() *Manifest {
				m := baseManifest()
				m.Spec.Environments = map[string]EnvironmentBlock{"production": {}}
				return m
			}(),
			existing: []ExistingEnvironment{{Name: "production"}, {Name: "qa"}},
			want:     []string{"! qa: no longer declared; kept until deleted with `slipway env delete`"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, c := range EnvironmentsSummary(tt.old, tt.new, tt.existing) {
				got = append(got, c.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("EnvironmentsSummary = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRollouts(t *testing.T) {
	t.Parallel()
	m := decodeTestFile(t, "testdata/diff/services/new.toml")
	got := Rollouts(m)
	want := []ServiceRollout{
		{Service: "postgres", Order: RolloutStopFirst, Derived: true, MonitorSeconds: "30"},
		{Service: "web", Order: RolloutStopFirst, Derived: false, MonitorSeconds: "30"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Rollouts = %+v, want %+v", got, want)
	}
}
