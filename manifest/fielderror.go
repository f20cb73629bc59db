package manifest

import (
	"fmt"
	"strings"
)

// FieldError is one problem with a manifest: the field path (such as
// spec.services[1].mounts[0].target), a stable snake_case code, a message a
// person can act on, and the position in the source when it is known.
type FieldError struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

func (e FieldError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	fmt.Fprintf(&b, " (%s)", e.Code)
	if e.Line > 0 {
		fmt.Fprintf(&b, " at line %d column %d", e.Line, e.Column)
	}
	return b.String()
}

// Errors is every problem found at once. It is an error when non-empty.
type Errors []FieldError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}
