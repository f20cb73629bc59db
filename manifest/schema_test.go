package manifest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The -update flag rewrites golden files. Another test file of the package
// may register it first, so it is looked up rather than declared.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func goldenUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// checkGolden compares got with the file at path, or rewrites it with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if goldenUpdate() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (regenerate with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale; regenerate with go test ./manifest -run %s -update\ngot:\n%s", path, t.Name(), got)
	}
}

func TestSchemaCurrent(t *testing.T) {
	got, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("..", "docs", "slipway.schema.json"), got)
}

func TestSchema(t *testing.T) {
	t.Parallel()
	data, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if s["$schema"] != SchemaDraft7 {
		t.Errorf("$schema = %v, want draft 7", s["$schema"])
	}
	if strings.Contains(string(data), "$defs") {
		t.Error("schema uses $defs; draft 7 calls them definitions")
	}
	defs := s["definitions"].(map[string]any)
	prop := func(def, name string) map[string]any {
		t.Helper()
		d, ok := defs[def].(map[string]any)
		if !ok {
			t.Fatalf("no definition %s", def)
		}
		p, ok := d["properties"].(map[string]any)[name].(map[string]any)
		if !ok {
			t.Fatalf("%s has no property %s", def, name)
		}
		return p
	}
	// Descriptions with commas survive whole.
	if got := prop("Metadata", "name")["description"]; got != "Application name: 1-63 lowercase letters, digits or hyphens, starting with a letter." {
		t.Errorf("metadata.name description = %q", got)
	}
	// Int fields take an integer or a reference.
	replicas := prop("Service", "replicas")
	if one, ok := replicas["oneOf"].([]any); !ok || len(one) != 2 || replicas["description"] == nil {
		t.Errorf("replicas schema = %v", replicas)
	}
	// Repository is a table or "self".
	repo := prop("Source", "repository")
	one, ok := repo["oneOf"].([]any)
	if !ok || len(one) != 2 {
		t.Fatalf("repository schema = %v", repo)
	}
	if !strings.Contains(string(mustJSON(t, one[1])), "Clone URL (file, git, http(s) or ssh).") {
		t.Errorf("repository table = %s", mustJSON(t, one[1]))
	}
	// Variables are strings, integers or booleans.
	vars := s["properties"].(map[string]any)["spec"]
	if !strings.Contains(string(mustJSON(t, vars)), "Spec") {
		t.Errorf("spec property = %v", vars)
	}
	if v := prop("Spec", "variables")["additionalProperties"].(map[string]any); len(v["oneOf"].([]any)) != 3 {
		t.Errorf("variables value schema = %v", v)
	}
	// Unknown fields are errors in manifests, so the schema rejects them.
	if defs["Service"].(map[string]any)["additionalProperties"] != false {
		t.Error("Service allows additional properties")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
