package manifest_test

import (
	"path/filepath"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// TestExamples_Valid keeps every manifest in examples/ decodable and valid,
// before and after defaults.
func TestExamples_Valid(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 7 {
		t.Fatalf("expected at least 7 example manifests, found %d", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			m, err := manifest.DecodeFile(file)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
				t.Fatalf("validate:\n%s", manifest.FormatText(errs))
			}
			manifest.ApplyDefaults(m)
			if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
				t.Fatalf("validate after defaults:\n%s", manifest.FormatText(errs))
			}
		})
	}
}

// TestExamples_RenderValid renders every example for each environment it
// declares (production when it declares none) and for a preview, and
// validates the result in full.
func TestExamples_RenderValid(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			m, err := manifest.DecodeFile(file)
			if err != nil {
				t.Fatal(err)
			}
			contexts := []manifest.RenderContext{}
			for name := range m.Spec.Environments {
				contexts = append(contexts, manifest.RenderContext{Environment: name, DeploymentID: manifest.PlanDeploymentID, GitBranch: "main", GitSHA: manifest.PlanGitSHA})
			}
			if len(contexts) == 0 {
				contexts = append(contexts, manifest.RenderContext{Environment: "production", DeploymentID: manifest.PlanDeploymentID, GitBranch: "main", GitSHA: manifest.PlanGitSHA})
			}
			if m.Spec.Previews != nil {
				contexts = append(contexts, manifest.RenderContext{Environment: "shop-feat-x-3fa2c1", Preview: true, DeploymentID: manifest.PlanDeploymentID, GitBranch: "feat/x", GitSHA: manifest.PlanGitSHA})
			}
			for _, rc := range contexts {
				r, errs := manifest.Render(m, rc)
				if len(errs) > 0 {
					t.Fatalf("render %s:\n%s", rc.Environment, manifest.FormatText(errs))
				}
				if errs := manifest.Validate(r, manifest.ValidateOptions{Rendered: true}); len(errs) > 0 {
					t.Errorf("rendered for %s:\n%s", rc.Environment, manifest.FormatText(errs))
				}
			}
		})
	}
}
