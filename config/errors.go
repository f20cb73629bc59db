package config

import (
	"fmt"
	"strings"
)

// Error codes.
const (
	CodeFileMissing    = "config_file_missing"
	CodeFileUnreadable = "config_file_unreadable"
	CodeSyntax         = "config_syntax_invalid"
	CodeKeyUnknown     = "config_key_unknown"
	CodeTypeInvalid    = "config_type_invalid"
	CodeOutOfRange     = "config_value_out_of_range"
	CodeURLInvalid     = "config_url_invalid"
	CodeAddressInvalid = "config_address_invalid"
	CodeValueInvalid   = "config_value_invalid"
	CodeConflict       = "config_conflict"
	CodeEnvConflict    = "config_env_conflict"
	CodeRequired       = "config_value_required"
)

// Error is one problem with the configuration: the key (ingress.http_port),
// a snake_case code, a message saying how to fix it, and where the bad
// value came from: the file with line and column, an environment variable,
// or a flag.
type Error struct {
	Key     string `json:"key,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// Source is the file path, "env NAME" or "flag --name"; empty for a
	// default value.
	Source string `json:"source,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	fmt.Fprintf(&b, " (%s)", e.Code)
	return b.String()
}

// Errors is every problem found at once; Load returns it when non-empty.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// orNil keeps a nil Errors from becoming a non-nil error interface.
func (es Errors) orNil() error {
	if len(es) == 0 {
		return nil
	}
	return es
}
