package convert

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Obj is one table/mapping of a decoded source document. Every accessor marks
// its key as read; Done reports the keys nobody read as errors, so a field the
// importer does not know is never dropped without a word.
type Obj struct {
	D    *Diags
	Path string
	M    map[string]any
	used map[string]bool
}

// NewObj wraps a decoded mapping found at path.
func NewObj(d *Diags, path string, m map[string]any) *Obj {
	return &Obj{D: d, Path: path, M: m, used: map[string]bool{}}
}

// At returns the source path of key.
func (o *Obj) At(key string) string { return Join(o.Path, key) }

// Has reports whether key is present (without marking it read).
func (o *Obj) Has(key string) bool { _, ok := o.M[key]; return ok }

// Raw returns the value of key and marks it read.
func (o *Obj) Raw(key string) (any, bool) {
	v, ok := o.M[key]
	if ok {
		o.used[key] = true
	}
	return v, ok
}

// Skip marks keys as read without translating them: client-only or
// documentation fields with no runtime meaning.
func (o *Obj) Skip(keys ...string) {
	for _, k := range keys {
		o.used[k] = true
	}
}

// Keys returns the mapping's keys in sorted order.
func (o *Obj) Keys() []string {
	keys := make([]string, 0, len(o.M))
	for k := range o.M {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Warn records a warning about key (the whole object when key is "").
func (o *Obj) Warn(key, format string, args ...any) { o.D.Warn(o.at(key), format, args...) }

// Error records an error about key (the whole object when key is "").
func (o *Obj) Error(key, format string, args ...any) { o.D.Error(o.at(key), format, args...) }

func (o *Obj) at(key string) string {
	if key == "" {
		return o.Path
	}
	return o.At(key)
}

// Unsupported marks key read and, when present, records msg at the given
// severity. It returns whether the key was present.
func (o *Obj) Unsupported(sev Severity, key, msg string) bool {
	if _, ok := o.Raw(key); !ok {
		return false
	}
	o.D.add(sev, o.At(key), "%s", msg)
	return true
}

// Str returns a string field. A value of another type is an error.
func (o *Obj) Str(key string) (string, bool) {
	v, ok := o.Raw(key)
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		o.Error(key, "expected a string, got %s", TypeName(v))
		return "", false
	}
	return o.text(key, s)
}

// text rejects strings Slipway cannot carry into a container.
func (o *Obj) text(key, s string) (string, bool) {
	if p := TextProblem(s, true); p != "" {
		o.Error(key, "the value %s", p)
		return "", false
	}
	return s, true
}

// Scalar returns a string, number or boolean field as text, as YAML and TOML
// environment maps allow.
func (o *Obj) Scalar(key string) (string, bool) {
	v, ok := o.Raw(key)
	if !ok {
		return "", false
	}
	s, isScalar := ScalarText(v)
	if !isScalar {
		o.Error(key, "expected a string, number or boolean, got %s", TypeName(v))
		return "", false
	}
	return o.text(key, s)
}

// Int returns an integer field.
func (o *Obj) Int(key string) (int64, bool) {
	v, ok := o.Raw(key)
	if !ok {
		return 0, false
	}
	n, isInt := AsInt(v)
	if !isInt {
		o.Error(key, "expected an integer, got %s", TypeName(v))
		return 0, false
	}
	return n, true
}

// Bool returns a boolean field.
func (o *Obj) Bool(key string) (bool, bool) {
	v, ok := o.Raw(key)
	if !ok {
		return false, false
	}
	b, isBool := v.(bool)
	if !isBool {
		o.Error(key, "expected a boolean, got %s", TypeName(v))
		return false, false
	}
	return b, true
}

// Obj returns a nested table, or nil when absent or not a table.
func (o *Obj) Obj(key string) *Obj {
	v, ok := o.Raw(key)
	if !ok {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		o.Error(key, "expected a table, got %s", TypeName(v))
		return nil
	}
	return NewObj(o.D, o.At(key), m)
}

// Strings returns a string array field.
func (o *Obj) Strings(key string) ([]string, bool) {
	v, ok := o.Raw(key)
	if !ok {
		return nil, false
	}
	list, isList := v.([]any)
	if !isList {
		o.Error(key, "expected an array of strings, got %s", TypeName(v))
		return nil, false
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, isScalar := ScalarText(item)
		if !isScalar {
			o.D.Error(Index(o.At(key), i), "expected a string, got %s", TypeName(item))
			return nil, false
		}
		if p := TextProblem(s, true); p != "" {
			o.D.Error(Index(o.At(key), i), "the value %s", p)
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// Objs returns an array of tables, each wrapped with its indexed path.
func (o *Obj) Objs(key string) []*Obj {
	v, ok := o.Raw(key)
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		// A single inline table where an array of tables is expected.
		if m, isMap := v.(map[string]any); isMap {
			return []*Obj{NewObj(o.D, o.At(key), m)}
		}
		o.Error(key, "expected an array of tables, got %s", TypeName(v))
		return nil
	}
	var out []*Obj
	for i, item := range list {
		m, isMap := item.(map[string]any)
		if !isMap {
			o.D.Error(Index(o.At(key), i), "expected a table, got %s", TypeName(item))
			continue
		}
		out = append(out, NewObj(o.D, Index(o.At(key), i), m))
	}
	return out
}

// DoneKnown reports every key nobody read as an error saying it has no
// translation, for sources whose loader already refused unknown keys; x-
// extension keys are free-form and skipped.
func (o *Obj) DoneKnown() {
	for _, k := range o.Keys() {
		if !o.used[k] && !strings.HasPrefix(k, "x-") {
			o.Error(k, "has no Slipway translation and was not carried over")
		}
	}
}

// Done reports every key nobody read as an error.
func (o *Obj) Done() {
	for _, k := range o.Keys() {
		if !o.used[k] {
			o.Error(k, "unknown field; it has no Slipway translation and was not carried over")
		}
	}
}

// TypeName names a decoded value's type for messages.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, uint64, int, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

// AsInt converts a decoded integer (TOML int64, YAML uint64/int64, or an
// integral float) to int64.
func AsInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case uint64:
		if n > math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

// ScalarText renders a string, number or boolean as text.
func ScalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}

// PruneZero deletes, at every depth, the keys whose value is a zero scalar
// ("", 0, false) or an empty array. Platforms that decode into Go structs,
// like hakopod, treat those as unset, and write them out in full exports.
// Tables are pruned but never deleted, even when they end up empty: a table's
// presence can be the setting ([services.x.job] declares a job). Tables under
// a key in keep, such as environment maps whose empty values are real, are
// left whole; array elements are never removed, only pruned.
func PruneZero(m map[string]any, keep map[string]bool) {
	for k, v := range m {
		if keep[k] {
			continue
		}
		if isZero(v, keep) {
			delete(m, k)
		}
	}
}

func isZero(v any, keep map[string]bool) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case int64:
		return x == 0
	case float64:
		return x == 0
	case []any:
		for _, item := range x {
			if sub, ok := item.(map[string]any); ok {
				PruneZero(sub, keep)
			}
		}
		return len(x) == 0
	case map[string]any:
		PruneZero(x, keep)
	}
	return false
}

// IsArrayOfTables reports the TOML [[name]] shape: a non-empty array of
// tables.
func IsArrayOfTables(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, item := range list {
		if _, isTable := item.(map[string]any); !isTable {
			return false
		}
	}
	return true
}
