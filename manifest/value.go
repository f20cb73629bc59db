package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Int is an integer setting that may instead be exactly one ${{ }}
// reference, such as replicas = "${{ vars.web_replicas }}". After Render, Ref
// is empty.
type Int struct {
	N   int64
	Ref string
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

// UnmarshalTOML accepts an integer or a string.
func (i *Int) UnmarshalTOML(data []byte) error {
	s := strings.TrimSpace(string(data))
	// The decoder hands over "key = value" for a value; keep the value.
	if eq := strings.Index(s, "="); eq >= 0 && !strings.HasPrefix(s, "\"") && !strings.HasPrefix(s, "'") {
		s = strings.TrimSpace(s[eq+1:])
	}
	return i.parse(s)
}

// UnmarshalJSON accepts a number or a string.
func (i *Int) UnmarshalJSON(data []byte) error {
	return i.parse(string(bytes.TrimSpace(data)))
}

func (i *Int) parse(s string) error {
	if s == "" {
		return fmt.Errorf("expected an integer or a ${{ }} reference")
	}
	switch s[0] {
	case '"':
		var str string
		if err := json.Unmarshal([]byte(s), &str); err != nil {
			return fmt.Errorf("expected an integer or a ${{ }} reference, got %s", s)
		}
		*i = Int{Ref: str}
		return nil
	case '\'':
		*i = Int{Ref: strings.Trim(s, "'")}
		return nil
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64)
	if err != nil {
		return fmt.Errorf("expected an integer or a ${{ }} reference, got %s", s)
	}
	*i = Int{N: n}
	return nil
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

// UnmarshalJSON accepts a string, an integer or a boolean.
func (v *Value) UnmarshalJSON(data []byte) error {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	switch x := raw.(type) {
	case string:
		*v = StringValue(x)
	case bool:
		*v = BoolValue(x)
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return fmt.Errorf("variables are strings, integers or booleans, got %s", x)
		}
		*v = IntValue(n)
	default:
		return fmt.Errorf("variables are strings, integers or booleans, got %s", string(data))
	}
	return nil
}

// UnmarshalTOML accepts a string, an integer or a boolean.
func (v *Value) UnmarshalTOML(data []byte) error {
	s := strings.TrimSpace(string(data))
	switch {
	case s == "true" || s == "false":
		*v = BoolValue(s == "true")
	case strings.HasPrefix(s, "\"") || strings.HasPrefix(s, "'"):
		var str string
		if s[0] == '\'' {
			str = strings.Trim(s, "'")
		} else if err := json.Unmarshal([]byte(s), &str); err != nil {
			return fmt.Errorf("invalid string %s", s)
		}
		*v = StringValue(str)
	default:
		n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64)
		if err != nil {
			return fmt.Errorf("variables are strings, integers or booleans, got %s", s)
		}
		*v = IntValue(n)
	}
	return nil
}

// MarshalJSON writes the typed value.
func (v Value) MarshalJSON() ([]byte, error) { return json.Marshal(v.Interface()) }

// MarshalTOML writes the typed value.
func (v Value) MarshalTOML() ([]byte, error) { return v.MarshalJSON() }
