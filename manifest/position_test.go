package manifest_test

import (
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

func TestPositions_TOML(t *testing.T) {
	t.Parallel()
	src := `api_version = "slipway.dev/v1alpha1"
[metadata]
name = "a"
[[spec.services]]
name = "web"
[[spec.services]]
name = "api"
command = ["run", "now"]
mounts = [{ volume = "v", target = "/a" }, { volume = "v", target = "/b" }]
  [spec.services.environment]
  "A.B" = "x"
[[spec.services.files]]
target = "/etc/x"
[spec.environments.production]
promote_from = "staging"
`
	p := manifest.Positions([]byte(src))
	want := map[string]manifest.Position{
		"api_version":                               {1, 1},
		"metadata.name":                             {3, 1},
		"spec.services[0]":                          {4, 1},
		"spec.services[1].name":                     {7, 1},
		"spec.services[1].command[1]":               {8, 19},
		"spec.services[1].mounts[1].target":         {9, 60},
		"spec.services[1].environment":              {10, 1},
		`spec.services[1].environment."A.B"`:        {11, 3},
		"spec.services[1].files[0].target":          {13, 1},
		"spec.environments.production":              {14, 1},
		"spec.environments.production.promote_from": {15, 1},
	}
	for path, pos := range want {
		if got, ok := p[path]; !ok || got != pos {
			t.Errorf("Positions[%s] = %v (present %v), want %v", path, got, ok, pos)
		}
	}
}

func TestPositions_JSON(t *testing.T) {
	t.Parallel()
	src := "{\n  \"metadata\": {\"name\": \"a\"},\n  \"spec\": {\"services\": [\n    {\"name\": \"web\", \"command\": [\"a\", \"b\"]}\n  ]}\n}"
	p := manifest.Positions([]byte(src))
	want := map[string]manifest.Position{
		"metadata.name":               {2, 16},
		"spec.services[0]":            {4, 5},
		"spec.services[0].command[1]": {4, 38},
	}
	for path, pos := range want {
		if got := p[path]; got != pos {
			t.Errorf("Positions[%s] = %v, want %v", path, got, pos)
		}
	}
}

func TestErrors_WithPositions(t *testing.T) {
	t.Parallel()
	p := map[string]manifest.Position{"spec.services[0]": {4, 1}, "spec.services[0].name": {5, 1}}
	errs := manifest.Errors{
		{Path: "spec.services[0].name", Code: "a"},
		{Path: "spec.services[0].healthcheck.port", Code: "b"},
		{Path: "spec.routes", Code: "c"},
		{Path: "spec.services[0].name", Code: "d", Line: 9, Column: 9},
	}
	got := errs.WithPositions(p)
	want := []manifest.Position{{5, 1}, {4, 1}, {0, 0}, {9, 9}}
	for i, w := range want {
		if got[i].Line != w.Line || got[i].Column != w.Column {
			t.Errorf("error %d at %d:%d, want %v", i, got[i].Line, got[i].Column, w)
		}
	}
	if errs[0].Line != 0 {
		t.Error("WithPositions modified its receiver")
	}
}
