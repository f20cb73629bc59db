package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
)

// SchemaDraft7 is the JSON Schema dialect of Schema. Draft 7 is what Taplo
// (Even Better TOML) and most editors understand.
const SchemaDraft7 = "http://json-schema.org/draft-07/schema#"

// SchemaID identifies the schema; it is also where the repository keeps it.
const SchemaID = "https://github.com/slipwayhq/slipway/blob/main/docs/slipway.schema.json"

// referencePattern matches a value that holds a ${{ }} reference, the only
// string an integer field accepts.
const referencePattern = `^\$\{\{.*\}\}$`

// Schema returns the manifest's JSON Schema (draft 7), generated from the Go
// types and the descriptions in their jsonschema tags. It describes
// structure, types and documentation; names, budgets and cross-references
// are left to validation.
func Schema() ([]byte, error) {
	r := &jsonschema.Reflector{
		ExpandedStruct: true,
		Mapper:         schemaMapper,
	}
	s := r.Reflect(&Manifest{})
	s.Version = SchemaDraft7
	s.ID = SchemaID
	s.Title = "Slipway Application manifest"
	s.Description = "A Slipway (slipway.dev/v1alpha1 or piqueld.dev/v1alpha1) Application manifest."
	fixDescriptions(s, reflect.TypeOf(Manifest{}), s.Definitions)

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("json schema: %w", err)
	}
	// The reflector speaks draft 2020-12, whose only difference here is the
	// name of the definitions table.
	out := bytes.ReplaceAll(buf.Bytes(), []byte(`"$defs"`), []byte(`"definitions"`))
	out = bytes.ReplaceAll(out, []byte(`"#/$defs/`), []byte(`"#/definitions/`))
	return out, nil
}

var (
	intType        = reflect.TypeOf(Int{})
	valueType      = reflect.TypeOf(Value{})
	repositoryType = reflect.TypeOf(Repository{})
)

// repositoryTable has Repository's table fields without its custom
// (un)marshalers, so the reflector describes the table form.
type repositoryTable Repository

// schemaMapper describes the types whose TOML/JSON form differs from their Go
// shape. Each call returns a fresh schema, so the field's own description
// lands beside it instead of behind a $ref.
func schemaMapper(t reflect.Type) *jsonschema.Schema {
	switch t {
	case intType:
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
			{Type: "integer"},
			{Type: "string", Pattern: referencePattern, Description: "Exactly one ${{ }} reference to an integer variable."},
		}}
	case valueType:
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
			{Type: "string"}, {Type: "integer"}, {Type: "boolean"},
		}}
	case repositoryType:
		r := &jsonschema.Reflector{ExpandedStruct: true, DoNotReference: true, Anonymous: true}
		table := r.Reflect(&repositoryTable{})
		table.Version = ""
		fixDescriptions(table, reflect.TypeOf(repositoryTable{}), nil)
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
			{Type: "string", Enum: []any{RepositorySelf}, Description: "The repository the manifest was fetched from."},
			table,
		}}
	}
	return nil
}

// fixDescriptions sets every property's description to the whole text after
// "description=" in its jsonschema tag. The reflector splits tags on commas,
// which cuts descriptions such as "1-63 lowercase letters, digits or
// hyphens" short; rewriting the tags with escapes would make them harder to
// read for the people editing the types.
func fixDescriptions(s *jsonschema.Schema, t reflect.Type, defs jsonschema.Definitions) {
	seen := map[reflect.Type]bool{}
	var walk func(s *jsonschema.Schema, t reflect.Type)
	walk = func(s *jsonschema.Schema, t reflect.Type) {
		for t.Kind() == reflect.Ptr || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t == intType || t == valueType || t == repositoryType {
			return
		}
		seen[t] = true
		if s == nil {
			s = defs[t.Name()]
		}
		if s == nil || s.Properties == nil {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			prop, ok := s.Properties.Get(name)
			if !ok {
				continue
			}
			if _, desc, ok := strings.Cut(f.Tag.Get("jsonschema"), "description="); ok {
				prop.Description = desc
			}
			walk(nil, f.Type)
		}
	}
	walk(s, t)
}
