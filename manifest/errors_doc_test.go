package manifest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codePatterns find the codes the package reports: Code fields, the second
// argument of the validator's add, and codes returned by syntax checks.
var codePatterns = []*regexp.Regexp{
	regexp.MustCompile(`Code:\s*"([a-z0-9_]+)"`),
	regexp.MustCompile(`v\.add\([^,]+,\s*"([a-z0-9_]+)"`),
	regexp.MustCompile(`return "([a-z0-9]+_[a-z0-9_]+)", `),
}

// TestErrorsDoc_ListsEveryCode keeps docs/errors.md complete.
func TestErrorsDoc_ListsEveryCode(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range codePatterns {
			for _, m := range re.FindAllStringSubmatch(string(src), -1) {
				found++
				if !strings.Contains(string(doc), "`"+m[1]+"`") {
					t.Errorf("%s reports %s, which docs/errors.md does not list", f, m[1])
				}
			}
		}
	}
	if found < 90 {
		t.Errorf("found only %d codes; the patterns no longer match the sources", found)
	}
}
