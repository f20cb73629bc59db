package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// envPrefix starts every canonical environment variable name.
const envPrefix = "SLIPWAY_"

// field is one configuration key, found by walking Config's struct tags.
type field struct {
	Key     string   // dotted TOML path: ingress.acme.email
	Env     string   // canonical variable: SLIPWAY_INGRESS_ACME_EMAIL
	Aliases []string // older names that still work
	Doc     string
	Secret  bool
	index   []int // reflect field index path from Config
	kind    reflect.Kind
}

// section is one TOML table, in declaration order.
type section struct {
	Key    string // "" for the top level
	Doc    string
	Fields []field
}

// sections lists every table and its keys in declaration order; keys of the
// top level come first, as TOML needs them before any [table] header.
func sections() []section {
	var out []section
	walk(reflect.TypeFor[Config](), "", "", nil, &out)
	return out
}

// fields lists every key in declaration order.
func fields() []field {
	var out []field
	for _, s := range sections() {
		out = append(out, s.Fields...)
	}
	return out
}

func fieldByKey(key string) (field, bool) {
	for _, f := range fields() {
		if f.Key == key {
			return f, true
		}
	}
	return field{}, false
}

func walk(t reflect.Type, prefix, doc string, index []int, out *[]section) {
	*out = append(*out, section{Key: prefix, Doc: doc})
	me := len(*out) - 1
	for i := range t.NumField() {
		sf := t.Field(i)
		name := sf.Tag.Get("toml")
		if name == "" {
			panic(fmt.Sprintf("config: field %s.%s has no toml tag", t.Name(), sf.Name))
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		idx := append(append([]int(nil), index...), i)
		if sf.Type.Kind() == reflect.Struct {
			walk(sf.Type, key, sf.Tag.Get("doc"), idx, out)
			continue
		}
		f := field{
			Key:    key,
			Env:    envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_")),
			Doc:    sf.Tag.Get("doc"),
			Secret: sf.Tag.Get("secret") == "true",
			index:  idx,
			kind:   sf.Type.Kind(),
		}
		if a := sf.Tag.Get("env"); a != "" {
			f.Aliases = strings.Split(a, ",")
		}
		(*out)[me].Fields = append((*out)[me].Fields, f)
	}
}

// typeName is the key's type as the documentation and errors say it.
func (f field) typeName() string {
	switch f.kind {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Slice:
		return "array of strings"
	}
	panic("config: unsupported kind " + f.kind.String())
}

func (f field) value(c *Config) reflect.Value {
	return reflect.ValueOf(c).Elem().FieldByIndex(f.index)
}

// set parses s (from the environment or a flag) into the key of c.
func (f field) set(c *Config, s string) error {
	v := f.value(c)
	switch f.kind {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("must be a boolean (true or false), got %q", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("must be an integer, got %q", s)
		}
		v.SetInt(n)
	case reflect.Slice:
		list, err := parseList(s)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(list))
	}
	return nil
}

// parseList reads an array of strings from the environment or a flag:
// written as TOML (["a", "b"]) or as a comma-separated list (a,b).
func parseList(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		var doc struct{ V []string }
		if err := toml.Unmarshal([]byte("V = "+s), &doc); err != nil {
			return nil, fmt.Errorf("must be an array of strings such as [\"a\", \"b\"] or a comma-separated list, got %q", s)
		}
		return doc.V, nil
	}
	list := []string{}
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			list = append(list, item)
		}
	}
	return list, nil
}

// tomlValue is the key's value in c written as a TOML value.
func (f field) tomlValue(c *Config) string {
	v := f.value(c)
	switch f.kind {
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Slice:
		quoted := make([]string, v.Len())
		for i := range quoted {
			quoted[i] = strconv.Quote(v.Index(i).String())
		}
		return "[" + strings.Join(quoted, ", ") + "]"
	default:
		return strconv.FormatInt(v.Int(), 10)
	}
}

// EnvVar is one environment variable Load reads.
type EnvVar struct {
	Name  string // SLIPWAY_INGRESS_HTTP_PORT
	Key   string // ingress.http_port
	Alias bool   // an older name kept working beside the canonical one
}

// EnvVars lists every variable Load reads (besides SLIPWAY_CONFIG), in key
// order, each key's canonical name first.
func EnvVars() []EnvVar {
	var out []EnvVar
	for _, f := range fields() {
		out = append(out, EnvVar{Name: f.Env, Key: f.Key})
		for _, a := range f.Aliases {
			out = append(out, EnvVar{Name: a, Key: f.Key, Alias: true})
		}
	}
	return out
}

// Redacted is c with every secret value that is set replaced by
// "(secret)", for printing.
func (c Config) Redacted() Config {
	for _, f := range fields() {
		if v := f.value(&c); f.Secret && v.String() != "" {
			v.SetString("(secret)")
		}
	}
	return c
}
