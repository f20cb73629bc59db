package manifest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/slipwayhq/slipway/manifest"
)

// docManifest is one fenced TOML block of a guide.
type docManifest struct {
	file string
	line int
	text string
}

// fencedTOML returns the ```toml blocks of a Markdown file.
func fencedTOML(t *testing.T, path string) []docManifest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docManifest
	var cur *docManifest
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```toml":
			cur = &docManifest{file: path, line: i + 2}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	return out
}

// TestDocs_ManifestsAreValid runs the examples of the README and the guides:
// every fenced TOML block is TOML, and every one that is a whole manifest
// (it sets api_version and has [metadata]) decodes and validates without
// an error.
func TestDocs_ManifestsAreValid(t *testing.T) {
	t.Parallel()
	guides, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range append([]string{"../README.md"}, guides...) {
		for _, b := range fencedTOML(t, path) {
			var doc map[string]any
			if err := toml.Unmarshal([]byte(b.text), &doc); err != nil {
				t.Errorf("%s:%d: not TOML: %v", b.file, b.line, err)
				continue
			}
			if !strings.Contains(b.text, "api_version") || !strings.Contains(b.text, "[metadata]") {
				continue
			}
			checked++
			m, err := manifest.Decode([]byte(b.text), "toml")
			if err != nil {
				t.Errorf("%s:%d: %v", b.file, b.line, err)
				continue
			}
			for _, e := range manifest.Validate(m, manifest.ValidateOptions{}).WithPositions(manifest.Positions([]byte(b.text))) {
				t.Errorf("%s:%d: %s", b.file, b.line, e.Error())
			}
		}
	}
	if checked < 2 {
		t.Errorf("found %d manifests in the README and docs/; the README's tour has at least two", checked)
	}
}
