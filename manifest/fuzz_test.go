package manifest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// FuzzDecodeValidate feeds arbitrary bytes through everything a manifest
// goes through: decode (as TOML and as JSON), positions, validation before
// and after rendering, warnings and defaults. None of it may panic, and a
// decoded manifest must survive a JSON round trip.
func FuzzDecodeValidate(f *testing.F) {
	seeds, _ := filepath.Glob("../examples/*.toml")
	more, _ := filepath.Glob("testdata/invalid/*")
	for _, path := range append(seeds, more...) {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(header + "[[spec.services]]\nname = \"web\"\nreplicas = \"${{ vars.n }}\"\n[spec.variables]\nn = 2\n"))
	f.Add([]byte(`{"metadata": {"name": "a"}, "spec": {"services": [{"name": "a", "source": {"repository": "self"}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = manifest.Positions(data)
		for _, format := range []string{"toml", "json"} {
			m, err := manifest.Decode(data, format)
			if err != nil {
				if _, ok := err.(manifest.Errors); !ok {
					t.Fatalf("Decode(%s) returned %T, want manifest.Errors", format, err)
				}
				continue
			}
			errs := manifest.Validate(m, manifest.ValidateOptions{StoredSecretNames: []string{"a"}})
			_ = errs.WithPositions(manifest.Positions(data))
			_ = manifest.FormatText(errs)
			if _, err := manifest.FormatJSON(errs); err != nil {
				t.Fatalf("FormatJSON: %v", err)
			}
			_ = manifest.Warnings(m)
			for _, env := range []string{"production", "staging"} {
				if r, rerrs := manifest.Render(m, manifest.RenderContext{Environment: env, DeploymentID: manifest.PlanDeploymentID}); len(rerrs) == 0 && r != nil {
					_ = manifest.Validate(r, manifest.ValidateOptions{Rendered: true})
				}
			}
			js, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("marshal a decoded manifest: %v", err)
			}
			if _, err := manifest.Decode(js, "json"); err != nil {
				t.Fatalf("a decoded manifest does not decode back from JSON: %v\n%s", err, js)
			}
			manifest.ApplyDefaults(m)
			_ = manifest.Validate(m, manifest.ValidateOptions{})
		}
	})
}
