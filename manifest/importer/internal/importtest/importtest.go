package importtest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
)

var update = flag.Bool("update", false, "rewrite the importers' golden files")

// Options are what the tests import with: a repository for sources that
// build from their own project.
var Options = importer.Options{Repository: "https://git.example.com/acme/project.git"}

// Render is what a golden file holds: the diagnostics as the CLI prints
// them, then the native manifest as TOML.
func Render(t testing.TB, res importer.Result) string {
	t.Helper()
	var b strings.Builder
	for _, d := range res.Diagnostics {
		b.WriteString("# " + d.String() + "\n")
	}
	if res.Manifest == nil {
		b.WriteString("# (no manifest)\n")
		return b.String()
	}
	out, err := importer.Encode(res.Manifest, "toml")
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	b.WriteString("\n")
	b.Write(out)
	return b.String()
}

// RoundTrip checks that the encoded manifest decodes with the native strict
// decoder and validates, in TOML and in JSON.
func RoundTrip(t testing.TB, m *manifest.Manifest) {
	t.Helper()
	for _, format := range []string{"toml", "json"} {
		out, err := importer.Encode(m, format)
		if err != nil {
			t.Fatalf("encode %s: %v", format, err)
		}
		back, err := manifest.Decode(out, format)
		if err != nil {
			t.Fatalf("the imported manifest does not decode as %s: %v\n%s", format, err, out)
		}
		// Strict: exactly what slipway app validate runs on the output.
		if errs := manifest.Validate(back, manifest.ValidateOptions{}); len(errs) > 0 {
			t.Fatalf("the imported manifest does not validate after a %s round trip: %v\n%s", format, errs, out)
		}
		RenderAll(t, back)
	}
}

// Placeholder is the value RenderAll gives variables an import declared
// without a default, as a user would set them per environment. It is valid
// wherever such a variable is used: text, hostnames and URLs.
const Placeholder = "value.example.com"

// RenderAll renders m for every environment it has (its declared ones, else
// production) and for a preview, as a deployment would, and fails on any
// error. Variables an import declared with an empty default stand for
// values the user must set, so they render as Placeholder.
func RenderAll(t testing.TB, m *manifest.Manifest) {
	t.Helper()
	overrides := map[string]manifest.Value{}
	for name, v := range m.Spec.Variables {
		if v.IsString() && v.String() == "" {
			overrides[name] = manifest.StringValue(Placeholder)
		}
	}
	targets := []manifest.RenderContext{}
	for _, env := range manifest.ExistingEnvironments(m) {
		targets = append(targets, manifest.RenderContext{Environment: env.Name})
	}
	targets = append(targets, manifest.RenderContext{Environment: "app-feature-3fa2c1", Preview: true})
	for _, rc := range targets {
		rc.DeploymentID = manifest.PlanDeploymentID
		rc.Overrides = overrides
		if m.Spec.Manifest != nil {
			rc.GitBranch, rc.GitSHA = "main", manifest.PlanGitSHA
		}
		if _, errs := manifest.Render(m, rc); len(errs) > 0 {
			t.Fatalf("the imported manifest does not render for %s %s: %v", map[bool]string{true: "preview", false: "environment"}[rc.Preview], rc.Environment, errs)
		}
	}
}

// Golden imports every file in dir (except *.golden) as dialect, compares
// the result with <file>.golden (rewritten with -update) and round-trips the
// manifest. wantOK lists the files that must import without errors; every
// other file must report at least one error.
func Golden(t *testing.T, dialect, dir string, wantOK map[string]bool) {
	t.Helper()
	GoldenWith(t, dialect, dir, Options, wantOK)
}

// GoldenWith is Golden importing with opts.
func GoldenWith(t *testing.T, dialect, dir string, opts importer.Options, wantOK map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".golden") || isDir(f) {
			continue
		}
		n++
		base := filepath.Base(f)
		t.Run(base, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := importer.Import(dialect, data, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.OK(); got != wantOK[base] {
				t.Errorf("OK() = %v, want %v; diagnostics:\n%s", got, wantOK[base], Render(t, res))
			}
			if res.Manifest != nil {
				RoundTrip(t, res.Manifest)
			}
			got := Render(t, res)
			golden := f + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(want, []byte(got)) {
				t.Errorf("%s differs from the import (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
	if n == 0 {
		t.Fatalf("no testdata in %s", dir)
	}
}

// Fuzz is the fuzz property every importer shares: Import never panics, and
// whenever it hands out a manifest, that manifest round-trips and validates.
func Fuzz(t *testing.T, dialect string, data []byte) {
	res, err := importer.Import(dialect, data, Options)
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest != nil {
		RoundTrip(t, res.Manifest)
	}
	for _, d := range res.Diagnostics {
		if d.Message == "" || (d.Severity != importer.SeverityError && d.Severity != importer.SeverityWarning) {
			t.Fatalf("malformed diagnostic %+v", d)
		}
		if strings.Contains(d.Message, "please report this") {
			t.Fatalf("the translator produced an invalid manifest: %s", d.Message)
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Seeds adds every testdata input of dir to the fuzz corpus.
func Seeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, p := range files {
		if strings.HasSuffix(p, ".golden") || isDir(p) {
			continue
		}
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
}

// Expect checks that each wanted prefix starts one diagnostic line, that
// errors appear only when one is wanted, and that any manifest round-trips.
func Expect(t *testing.T, res importer.Result, want []string) {
	t.Helper()
	var lines []string
	for _, d := range res.Diagnostics {
		lines = append(lines, d.String())
	}
	wantErr := false
	for _, w := range want {
		wantErr = wantErr || strings.HasPrefix(w, "error:")
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, w)
		}
		if !found {
			t.Errorf("no diagnostic starts with %q; got:\n%s", w, strings.Join(lines, "\n"))
		}
	}
	if !wantErr && !res.OK() {
		t.Errorf("unexpected errors:\n%s", strings.Join(lines, "\n"))
	}
	if res.Manifest != nil {
		RoundTrip(t, res.Manifest)
	}
}

// ExpectNone checks that no diagnostic line contains any of the substrings.
func ExpectNone(t *testing.T, res importer.Result, substrings []string) {
	t.Helper()
	for _, d := range res.Diagnostics {
		for _, s := range substrings {
			if strings.Contains(d.String(), s) {
				t.Errorf("diagnostic %q contains %q", d.String(), s)
			}
		}
	}
}
