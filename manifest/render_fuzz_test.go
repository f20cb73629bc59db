package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRender decodes arbitrary TOML and renders it for an environment or a
// preview: nothing may panic, a successful render leaves no integer
// reference behind, and rendering never changes its input. It also runs the
// canonical form, the hash and the diff over what decodes.
//
//	go test ./manifest -run '^$' -fuzz FuzzRender -fuzztime 30s
func FuzzRender(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/*.toml")
	more, _ := filepath.Glob("testdata/diff/*/*.toml")
	for _, path := range append(seeds, more...) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "production", false)
		f.Add(data, "notes-feat-3fa2c1", true)
	}
	f.Add([]byte("[metadata]\nname = \"a\"\n[[spec.services]]\nname = \"w\"\nreplicas = \"${{ vars.r }}\"\nsource = { type = \"image\", image = \"x\" }\n[spec.variables]\nr = \"3\"\n"), "staging", false)
	f.Add([]byte("[[spec.services]]\nname = \"w\"\ncommand = [\"$${{ a }}${{ env.name }}${{\"]\n"), "x", false)

	f.Fuzz(func(t *testing.T, data []byte, env string, preview bool) {
		m, err := Decode(data, "toml")
		if err != nil {
			return
		}
		before, err := CanonicalJSON(m)
		if err != nil {
			t.Fatalf("canonical form of a decoded manifest: %v", err)
		}
		_ = Validate(m, ValidateOptions{})
		rc := RenderContext{Environment: env, Preview: preview, DeploymentID: PlanDeploymentID, GitBranch: "main", GitSHA: PlanGitSHA}
		out, errs := Render(m, rc)
		_ = Scope(m, rc)
		if after, _ := CanonicalJSON(m); !bytes.Equal(before, after) {
			t.Fatal("Render changed its input")
		}
		if len(errs) == 0 {
			walkFields(out, func(fl *field) {
				if fl.kind == fieldInt && fl.num.IsRef() {
					t.Fatalf("%s still holds %q after rendering", fl.path, fl.num.Ref)
				}
			})
			_ = Diff(m, out)
		}
		files := map[string][]byte{}
		for _, svc := range m.Spec.Services {
			for _, fl := range svc.Files {
				files[fl.Path] = []byte(fl.Path)
			}
		}
		if _, err := SpecHash(m, files); err != nil {
			t.Fatalf("SpecHash: %v", err)
		}
		_ = FormatPlan(NewPlan(nil, m, nil))
	})
}
