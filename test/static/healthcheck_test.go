package static

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// minTestProbeSeconds is the shortest health-check interval and timeout a
// test may deploy. Docker's timeout includes starting the probe inside the
// container, which takes more than a second on a busy machine: a 1-second
// check kills healthy tasks there and fails the test for no fault of the
// code under test.
const minTestProbeSeconds = 2

// probeRuleExempt are folders whose tests check the manifest format itself
// (short and invalid values on purpose) and deploy nothing.
var probeRuleExempt = []string{"manifest/", "config/"}

var (
	tomlTable     = regexp.MustCompile(`^\s*\[{1,2}([^\]]+)\]{1,2}\s*$`)
	tomlProbeKey  = regexp.MustCompile(`\b(interval_seconds|timeout_seconds)\s*=\s*(-?\d+)`)
	inlineHealth  = regexp.MustCompile(`healthcheck\s*=\s*\{([^}]*)\}`)
	goProbeField  = regexp.MustCompile(`\b(IntervalSeconds|TimeoutSeconds)\s*:\s*manifest\.NewInt\((-?\d+)\)`)
	probeFileExts = map[string]bool{".go": true, ".toml": true}
)

// TestNoShortHealthChecksInTests reads every test file, test kit and test
// fixture of the module and fails on a health check whose interval or
// timeout is under minTestProbeSeconds, in a TOML manifest
// ([spec.services.healthcheck] tables and inline healthcheck tables) or a
// manifest.Healthcheck literal.
func TestNoShortHealthChecksInTests(t *testing.T) {
	root := moduleRoot(t)
	var offenders []string
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin" || name == "test-artifacts") {
				return filepath.SkipDir
			}
			return nil
		}
		if !probeFileExts[filepath.Ext(path)] || !isTestMaterial(rel) {
			return nil
		}
		for _, p := range probeRuleExempt {
			if strings.HasPrefix(rel, p) {
				return nil
			}
		}
		checked++
		found, err := shortProbes(path)
		if err != nil {
			return err
		}
		for _, f := range found {
			offenders = append(offenders, rel+":"+f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d test files read: the walk is broken", checked)
	}
	for _, o := range offenders {
		t.Errorf("%s: a test health check shorter than %d s; use interval_seconds = 2, timeout_seconds = 2, start_period_seconds = 30, retries = 5 (see minTestProbeSeconds)", o, minTestProbeSeconds)
	}
	t.Logf("%d test files read, %d short health checks", checked, len(offenders))
}

// isTestMaterial says whether the file at rel (slash-separated, from the
// module root) is a test, a test kit (a package named …test) or a fixture.
func isTestMaterial(rel string) bool {
	if strings.HasSuffix(rel, "_test.go") || strings.Contains("/"+rel, "/testdata/") {
		return true
	}
	dir := filepath.Base(filepath.Dir(rel))
	return strings.HasSuffix(dir, "test") || strings.HasPrefix(rel, "test/")
}

// shortProbes returns "line: text" for each health-check interval or
// timeout under minTestProbeSeconds in the file. A "\n" escape in a Go
// string counts as a line break, so one-line manifests are read too.
func shortProbes(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	inHealth := false
	for i, text := range strings.Split(string(b), "\n") {
		for _, line := range strings.Split(text, `\n`) {
			if m := tomlTable.FindStringSubmatch(line); m != nil {
				inHealth = strings.HasSuffix(strings.TrimSpace(m[1]), "healthcheck")
			} else if strings.Contains(line, "`") {
				inHealth = false // a Go raw string opens or closes
			}
			var found [][]string
			if inHealth {
				found = append(found, tomlProbeKey.FindAllStringSubmatch(line, -1)...)
			}
			for _, in := range inlineHealth.FindAllStringSubmatch(line, -1) {
				found = append(found, tomlProbeKey.FindAllStringSubmatch(in[1], -1)...)
			}
			found = append(found, goProbeField.FindAllStringSubmatch(line, -1)...)
			for _, m := range found {
				if v, err := strconv.Atoi(m[2]); err == nil && v < minTestProbeSeconds {
					out = append(out, strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
				}
			}
		}
	}
	return out, nil
}
