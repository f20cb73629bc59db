package manifest_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// updateGolden reports whether -update was given. The flag is looked up,
// not declared, because the package's internal tests may register it first.
func updateGolden() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files in testdata/")
	}
	f := flag.Lookup("update")
	return f.Value.String() == "true"
}

func init() { updateGolden() }

// golden compares got with testdata/<name>, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updateGolden() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (run go test ./manifest -run %s -update to accept):\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}

// TestGolden_ManyMistakes pins the text and JSON reports of a manifest with
// many mistakes, with positions, as `slipway app validate` prints them.
func TestGolden_ManyMistakes(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/invalid/many-mistakes.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode(src, "toml")
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	errs := manifest.Validate(m, manifest.ValidateOptions{StoredSecretNames: []string{"db-password"}}).WithPositions(manifest.Positions(src))
	if len(errs) < 40 {
		t.Errorf("only %d errors; the manifest has more mistakes than that", len(errs))
	}
	for _, e := range errs {
		if e.Line == 0 {
			t.Errorf("%s has no position", e.Error())
		}
	}
	golden(t, "invalid/many-mistakes.txt", []byte(manifest.FormatText(errs)))
	js, err := manifest.FormatJSON(errs)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "invalid/many-mistakes.json", append(js, '\n'))
}

// TestGolden_DecodeErrors pins the reports of a TOML and a JSON manifest that
// do not decode.
func TestGolden_DecodeErrors(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"unknown-fields.toml", "unknown-fields.json"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := manifest.DecodeFile(filepath.Join("testdata/invalid", name))
			errs, ok := err.(manifest.Errors)
			if !ok {
				t.Fatalf("DecodeFile error = %v (%T), want manifest.Errors", err, err)
			}
			golden(t, "invalid/"+name+".txt", []byte(manifest.FormatText(errs)))
		})
	}
}

func TestFormatJSON_Valid(t *testing.T) {
	t.Parallel()
	js, err := manifest.FormatJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != "{\n  \"valid\": true,\n  \"errors\": []\n}" {
		t.Errorf("FormatJSON(nil) = %s", js)
	}
	if manifest.FormatText(nil) != "" {
		t.Error("FormatText(nil) is not empty")
	}
}
