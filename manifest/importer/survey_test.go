package importer_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest/importer"
)

// TestSurvey runs a directory of real manifests, collected by hand from the
// platforms' own repositories (they are others' files, so they are not
// committed), and classifies each import. It runs only when
// SLIPWAY_IMPORT_SURVEY names that directory:
//
//	<dir>/<dialect>/<file>     the manifests
//	<dir>/expect.txt           one line per file: "<dialect>/<file> faithful",
//	                           or "<dialect>/<file> partial <path>...", listing
//	                           the source field of every feature that has no
//	                           Slipway equivalent
//
// A file is faithful when it imports without errors, rightly partial when
// every error names one of its listed features and each listed feature has
// an error, and wrong otherwise.
func TestSurvey(t *testing.T) {
	dir := os.Getenv("SLIPWAY_IMPORT_SURVEY")
	if dir == "" {
		t.Skip("set SLIPWAY_IMPORT_SURVEY to a survey directory")
	}
	expect := readExpectations(t, filepath.Join(dir, "expect.txt"))
	totals := map[string]map[string]int{}
	var keys []string
	for k := range expect {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		want := expect[key]
		dialect, _, _ := strings.Cut(key, "/")
		data, err := os.ReadFile(filepath.Join(dir, key))
		if err != nil {
			t.Fatal(err)
		}
		verdict, why := classify(dialect, data, want)
		if totals[dialect] == nil {
			totals[dialect] = map[string]int{}
		}
		totals[dialect][verdict]++
		totals["all"] = addOne(totals["all"], verdict)
		fmt.Printf("%-14s %-40s %s\n", verdict, key, why)
	}
	for _, d := range append(append([]string{}, importer.Dialects...), "all") {
		if c := totals[d]; c != nil {
			fmt.Printf("%-8s faithful %2d  rightly-partial %2d  wrong %2d  unsupported %2d\n", d, c["faithful"], c["partial"], c["wrong"], c["unsupported"])
		}
	}
}

func addOne(m map[string]int, k string) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[k]++
	return m
}

func classify(dialect string, data []byte, want []string) (verdict, why string) {
	res, err := importer.Import(dialect, data, importer.Options{Repository: "https://git.example.com/acme/project.git"})
	if err != nil {
		return "unsupported", err.Error()
	}
	var errs []importer.Diagnostic
	for _, d := range res.Diagnostics {
		if d.Severity == importer.SeverityError {
			errs = append(errs, d)
		}
	}
	if want[0] == "faithful" {
		if res.OK() {
			return "faithful", ""
		}
		if len(errs) == 0 {
			return "wrong", "no manifest"
		}
		return "wrong", errs[0].String()
	}
	covered := map[string]bool{}
	for _, e := range errs {
		ok := false
		for _, prefix := range want[1:] {
			if strings.HasPrefix(e.Path, prefix) {
				ok, covered[prefix] = true, true
			}
		}
		if !ok {
			return "wrong", e.String()
		}
	}
	for _, prefix := range want[1:] {
		if !covered[prefix] {
			return "wrong", "no error names " + prefix
		}
	}
	if res.Manifest == nil {
		return "wrong", "no manifest"
	}
	return "partial", ""
}

func readExpectations(t *testing.T, path string) map[string][]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 || (fields[1] != "faithful" && fields[1] != "partial") {
			t.Fatalf("%s: malformed line %q", path, line)
		}
		out[fields[0]] = fields[1:]
	}
	return out
}
