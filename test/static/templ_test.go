package static

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTempl_GeneratedFilesAreCurrent regenerates every views/**/*.templ in
// a scratch copy, the way `make generate` does (from views/, so error
// positions name page/x.templ), and fails when a committed *_templ.go
// differs from what its .templ gives, or has no .templ.
func TestTempl_GeneratedFilesAreCurrent(t *testing.T) {
	root := moduleRoot(t)
	views := filepath.Join(root, "views")
	scratch := t.TempDir()
	committed := map[string]bool{}
	err := filepath.WalkDir(views, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(views, path)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(rel, "_templ.go"):
			committed[rel] = true
		case strings.HasSuffix(rel, ".templ"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			dst := filepath.Join(scratch, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "tool", "templ", "generate", "-path", scratch)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("templ generate: %v\n%s", err, out)
	}
	err = filepath.WalkDir(scratch, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_templ.go") {
			return err
		}
		rel, err := filepath.Rel(scratch, path)
		if err != nil {
			return err
		}
		delete(committed, rel)
		want, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.Join(views, rel))
		if err != nil {
			t.Errorf("views/%s is missing: run make generate", rel)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("views/%s is stale: run make generate", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range committed {
		t.Errorf("views/%s has no .templ: delete it", rel)
	}
}
