package manifest

import (
	"encoding/json"
	"strings"
)

// FormatText writes one error per line: "path: message (code) at line L
// column C", the position only when known.
func FormatText(es Errors) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// validationReport is the JSON shape of `slipway app validate --format json`.
type validationReport struct {
	Valid  bool         `json:"valid"`
	Errors []FieldError `json:"errors"`
}

// FormatJSON writes {"valid": bool, "errors": [{path, code, message, line,
// column}]}, with line and column only when known and errors never null.
func FormatJSON(es Errors) ([]byte, error) {
	r := validationReport{Valid: len(es) == 0, Errors: []FieldError(es)}
	if r.Errors == nil {
		r.Errors = []FieldError{}
	}
	return json.MarshalIndent(r, "", "  ")
}
