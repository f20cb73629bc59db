package service

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
)

// envKeyPattern is what a service environment key may be in a .env file:
// a shell variable name.
var envKeyPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseDotenv reads a .env file: KEY=value lines, optionally after
// "export ", with blank lines and # comments ignored. A value in double
// quotes takes \n, \t, \" and \\ escapes; in single quotes it is literal;
// unquoted it ends at " #". Every bad line is an error at its line, under
// field (e.g. spec.services[0].environment), with a code.
func ParseDotenv(text, field string) (map[string]string, manifest.Errors) {
	out := map[string]string{}
	seen := map[string]int{}
	var errs manifest.Errors
	bad := func(n int, path, code, msg string) {
		errs = append(errs, manifest.FieldError{Path: path, Code: code, Message: msg, Line: n, Column: 1})
	}
	for i, raw := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, value, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok {
			bad(n, field, "env_line_invalid", fmt.Sprintf("line %d is not KEY=value: %q", n, truncateText(line, 40)))
			continue
		}
		if !envKeyPattern.MatchString(key) {
			bad(n, field, "env_key_invalid", fmt.Sprintf("line %d: %q is not a valid name: use letters, digits and _, not starting with a digit", n, truncateText(key, 40)))
			continue
		}
		path := field + "." + key
		if first, dup := seen[key]; dup {
			bad(n, path, "duplicate_key", fmt.Sprintf("line %d sets %s again (first set on line %d)", n, key, first))
			continue
		}
		v, err := dotenvValue(strings.TrimSpace(value))
		if err != "" {
			bad(n, path, "env_value_invalid", fmt.Sprintf("line %d: %s", n, err))
			continue
		}
		seen[key] = n
		out[key] = v
	}
	return out, errs
}

func dotenvValue(v string) (string, string) {
	switch {
	case strings.HasPrefix(v, `"`):
		end := strings.LastIndex(v, `"`)
		if end == 0 {
			return "", "the double quote is not closed"
		}
		s, err := strconv.Unquote(v[:end+1])
		if err != nil {
			return "", "the quoted value has an invalid escape (use \\n, \\t, \\\" or \\\\)"
		}
		return s, ""
	case strings.HasPrefix(v, `'`):
		end := strings.LastIndex(v, `'`)
		if end == 0 {
			return "", "the single quote is not closed"
		}
		return v[1:end], ""
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v, ""
}

// ReplaceServiceEnvironment returns the edit making env the whole
// environment of the named service: keys it lacks are removed.
func ReplaceServiceEnvironment(name string, env map[string]string) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		s, err := findService(m, name)
		if err != nil {
			return err
		}
		e := ServiceEdit{Environment: map[string]*string{}}
		for k := range s.Environment {
			if _, keep := env[k]; !keep {
				e.Environment[k] = nil
			}
		}
		for k, v := range env {
			e.Environment[k] = &v
		}
		return EditService(name, e)(m)
	}
}

// FormatDotenv writes a service environment as .env lines, quoting
// values a .env reader would otherwise change.
func FormatDotenv(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := env[k]
		if v == "" || strings.ContainsAny(v, "\"'#\\\n\t") || strings.TrimSpace(v) != v {
			v = strconv.Quote(v)
		}
		b.WriteString(k + "=" + v + "\n")
	}
	return b.String()
}

func truncateText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
