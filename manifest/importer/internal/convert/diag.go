package convert

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Severity says whether a diagnostic blocks the import.
type Severity string

// Severities. An error means a source field could not be translated
// faithfully; a warning means it was translated with a difference the user
// should know about, or dropped because it has no effect on Slipway.
const (
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
)

// Diagnostic is one remark about the source file. Path is the field in the
// ORIGINAL file (services.web.readiness.type), Line is 1-based when the source
// format reports positions, else 0.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Path     string   `json:"path"`
	Message  string   `json:"message"`
	Line     int      `json:"line,omitempty"`
}

// String formats the diagnostic as the CLI prints it.
func (d Diagnostic) String() string {
	path := d.Path
	if path == "" {
		path = "(file)"
	}
	if d.Line > 0 {
		return fmt.Sprintf("%s: %s: %s (line %d)", d.Severity, path, d.Message, d.Line)
	}
	return fmt.Sprintf("%s: %s: %s", d.Severity, path, d.Message)
}

// Diags collects diagnostics. Lines, when set, maps a source path to its line.
type Diags struct {
	List  []Diagnostic
	Lines func(path string) int
}

func (d *Diags) add(sev Severity, path, format string, args ...any) {
	line := 0
	if d.Lines != nil {
		line = d.Lines(path)
	}
	d.List = append(d.List, Diagnostic{Severity: sev, Path: path, Message: fmt.Sprintf(format, args...), Line: line})
}

// Warn records a warning at path.
func (d *Diags) Warn(path, format string, args ...any) { d.add(SeverityWarning, path, format, args...) }

// Error records an error at path.
func (d *Diags) Error(path, format string, args ...any) { d.add(SeverityError, path, format, args...) }

// HasErrors reports whether any diagnostic is an error.
func HasErrors(list []Diagnostic) bool {
	for _, x := range list {
		if x.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Join appends key to a source path, quoting keys that are not bare TOML/YAML
// keys (such as gordon's dotted service names) so the path stays unambiguous.
func Join(path, key string) string {
	if !bareKey(key) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index appends a list index to a source path.
func Index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func bareKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Sort orders diagnostics by line, then path, keeping errors before warnings
// on the same field, so output is stable whatever the map order was.
func Sort(list []Diagnostic) {
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Severity != b.Severity {
			return a.Severity == SeverityError
		}
		return strings.Compare(a.Message, b.Message) < 0
	})
}
