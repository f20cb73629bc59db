package manifest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// Int is an integer setting that may instead be exactly one ${{ }}
// reference, such as replicas = "${{ vars.web_replicas }}". After Render, Ref
// is empty.
type Int struct {
	N   int64
	Ref string

	// bad holds the source text of a value that is neither an integer nor a
	// string holding a reference. Unmarshalling records it instead of
	// failing, because the decoder would report the failure without a field
	// or position; Decode reports it with both (see decode.go).
	bad string
}

// NewInt returns a concrete integer setting.
func NewInt(n int64) *Int { return &Int{N: n} }

// Or returns the concrete value, or def when the setting is absent. It must
// only be called on rendered manifests.
func (i *Int) Or(def int64) int64 {
	if i == nil {
		return def
	}
	return i.N
}

// IsRef reports whether the setting still holds a reference.
func (i *Int) IsRef() bool { return i != nil && i.Ref != "" }

// UnmarshalTOML accepts an integer or a string holding a reference.
func (i *Int) UnmarshalTOML(data []byte) error {
	s := strings.TrimSpace(string(data))
	// The decoder hands over "key = value" for a value; keep the value.
	if eq := strings.Index(s, "="); eq >= 0 && !strings.HasPrefix(s, "\"") && !strings.HasPrefix(s, "'") {
		s = strings.TrimSpace(s[eq+1:])
	}
	i.parse(s, true)
	return nil
}

// UnmarshalJSON accepts a number or a string holding a reference.
func (i *Int) UnmarshalJSON(data []byte) error {
	i.parse(string(bytes.TrimSpace(data)), false)
	return nil
}

func (i *Int) parse(s string, isTOML bool) {
	*i = Int{bad: s}
	if s == "" {
		return
	}
	if str, ok := unquote(s, isTOML); ok {
		// Strings are never parsed into numbers: a string is accepted in an
		// integer field only when it holds a reference.
		if strings.Contains(str, "${{") {
			*i = Int{Ref: str}
		}
		return
	}
	if isTOML {
		s = strings.ReplaceAll(s, "_", "")
	} else if len(s) > 1 && (s[0] == '0' || strings.HasPrefix(s, "-0")) {
		return // JSON has no octal, hexadecimal or leading zeros
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return
	}
	*i = Int{N: n}
}

// unquote returns the text of a quoted TOML or JSON string.
func unquote(s string, isTOML bool) (string, bool) {
	if len(s) < 2 || (s[0] != '"' && !(isTOML && s[0] == '\'')) {
		return "", false
	}
	// The common single-line forms without escapes need no decoder.
	last := s[len(s)-1]
	simple := last == s[0] && !strings.ContainsAny(s[1:len(s)-1], "\\\"'\n")
	if simple {
		return s[1 : len(s)-1], true
	}
	if isTOML {
		var doc struct {
			V string `toml:"v"`
		}
		if err := toml.Unmarshal([]byte("v = "+s), &doc); err != nil {
			return "", false
		}
		return doc.V, true
	}
	var str string
	if err := json.Unmarshal([]byte(s), &str); err != nil {
		return "", false
	}
	return str, true
}

// MarshalJSON writes the integer, or the reference as a string.
func (i Int) MarshalJSON() ([]byte, error) {
	if i.Ref != "" {
		return json.Marshal(i.Ref)
	}
	return []byte(strconv.FormatInt(i.N, 10)), nil
}

// MarshalTOML writes the integer, or the reference as a string.
func (i Int) MarshalTOML() ([]byte, error) { return i.MarshalJSON() }

// Value is a variable value: a string, an integer or a boolean.
type Value struct {
	kind  valueKind
	str   string
	num   int64
	truth bool

	// bad holds the source text of a value of another type (a float, an
	// array, a table); Decode reports it with its field and position.
	bad string
}

type valueKind uint8

const (
	valueNone valueKind = iota
	valueString
	valueInt
	valueBool
)

// StringValue, IntValue and BoolValue build variable values.
func StringValue(s string) Value { return Value{kind: valueString, str: s} }
func IntValue(n int64) Value     { return Value{kind: valueInt, num: n} }
func BoolValue(b bool) Value     { return Value{kind: valueBool, truth: b} }

// Interface returns the value as string, int64 or bool (nil when unset).
func (v Value) Interface() any {
	switch v.kind {
	case valueString:
		return v.str
	case valueInt:
		return v.num
	case valueBool:
		return v.truth
	}
	return nil
}

// String renders the value as text, as it is substituted into strings.
func (v Value) String() string {
	switch v.kind {
	case valueString:
		return v.str
	case valueInt:
		return strconv.FormatInt(v.num, 10)
	case valueBool:
		return strconv.FormatBool(v.truth)
	}
	return ""
}

// IsString reports whether the value is a string.
func (v Value) IsString() bool { return v.kind == valueString }

// UnmarshalJSON accepts a string, an integer or a boolean. Other values are
// kept as a type mismatch that Decode reports with its position.
func (v *Value) UnmarshalJSON(data []byte) error {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	*v = Value{bad: string(bytes.TrimSpace(data))}
	switch x := raw.(type) {
	case string:
		*v = StringValue(x)
	case bool:
		*v = BoolValue(x)
	case json.Number:
		if n, err := x.Int64(); err == nil {
			*v = IntValue(n)
		}
	}
	return nil
}

// UnmarshalTOML accepts a string, an integer or a boolean. Other values are
// kept as a type mismatch that Decode reports with its position.
func (v *Value) UnmarshalTOML(data []byte) error {
	s := strings.TrimSpace(string(data))
	*v = Value{bad: s}
	switch {
	case s == "true" || s == "false":
		*v = BoolValue(s == "true")
	case strings.HasPrefix(s, "\"") || strings.HasPrefix(s, "'"):
		if str, ok := unquote(s, true); ok {
			*v = StringValue(str)
		}
	default:
		if n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64); err == nil {
			*v = IntValue(n)
		}
	}
	return nil
}

// MarshalJSON writes the typed value.
func (v Value) MarshalJSON() ([]byte, error) { return json.Marshal(v.Interface()) }

// MarshalTOML writes the typed value.
func (v Value) MarshalTOML() ([]byte, error) { return v.MarshalJSON() }
