package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/invopop/jsonschema"

	"github.com/slipwayhq/slipway/manifest"
)

// OpenAPIVersion is the version the document declares for the API.
const OpenAPIVersion = "v1"

const schemaRef = "#/components/schemas/"

var (
	manifestType = reflect.TypeOf(manifest.Manifest{})
	valueType    = reflect.TypeOf(manifest.Value{})
	intType      = reflect.TypeOf(manifest.Int{})
	rawJSONType  = reflect.TypeOf(json.RawMessage{})
	apiPkgPath   = reflect.TypeOf(Error{}).PkgPath()
	fiberParam   = regexp.MustCompile(`:([A-Za-z0-9_]+)`)
)

// OpenAPI returns the OpenAPI 3.1 document of /api/v1, generated from
// routeTable and the Go types of the bodies; docs/openapi.json is its
// checked-in copy.
func OpenAPI() ([]byte, error) {
	schemas := map[string]any{}
	if err := addManifestSchemas(schemas); err != nil {
		return nil, err
	}
	r := &jsonschema.Reflector{Mapper: wireMapper, Namer: wireName}
	ref := func(v any) (map[string]any, error) { return reflectInto(r, schemas, v) }
	errRef, err := ref(Error{})
	if err != nil {
		return nil, err
	}

	paths := map[string]map[string]any{}
	for _, rt := range routeTable {
		op := map[string]any{
			"operationId": operationID(rt),
			"summary":     rt.Summary,
			"responses": map[string]any{
				"default": map[string]any{"description": "An error: code, message and details.",
					"content": map[string]any{"application/json": map[string]any{"schema": errRef}}},
			},
		}
		if rt.Public {
			op["security"] = []any{}
		} else if rt.Scope != "" {
			op["x-slipway-scope"] = string(rt.Scope)
		}
		var params []any
		for _, m := range fiberParam.FindAllStringSubmatch(rt.Path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
				"description": pathParams[m[1]], "schema": map[string]any{"type": "string"}})
		}
		for _, q := range rt.Query {
			params = append(params, map[string]any{"name": q.Name, "in": "query", "description": q.Description,
				"schema": map[string]any{"type": q.Type}})
		}
		if rt.IfMatch {
			params = append(params, map[string]any{"name": "If-Match", "in": "header",
				"description": "The revision you edited; the save fails with generation_conflict if another was saved since.",
				"schema":      map[string]any{"type": "string"}})
		}
		if isMutating(rt.Method) {
			params = append(params, map[string]any{"name": IdempotencyKeyHeader, "in": "header",
				"description": "Makes the request safe to retry: its first answer is replayed for 24 hours.",
				"schema":      map[string]any{"type": "string", "minLength": 1, "maxLength": maxIdempotencyKey}})
		}
		if params != nil {
			op["parameters"] = params
		}
		content := map[string]any{}
		if rt.Request != nil {
			s, err := ref(rt.Request)
			if err != nil {
				return nil, err
			}
			content["application/json"] = map[string]any{"schema": s}
		}
		for _, ct := range rt.RawRequest {
			content[ct] = map[string]any{"schema": map[string]any{"type": "string"}}
		}
		if len(content) > 0 {
			op["requestBody"] = map[string]any{"required": !rt.BodyOptional, "content": content}
		}
		ok := map[string]any{"description": http.StatusText(rt.Status)}
		switch {
		case rt.Response != nil:
			s, err := ref(rt.Response)
			if err != nil {
				return nil, err
			}
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": s}}
		case rt.Public:
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}
		}
		op["responses"].(map[string]any)[fmt.Sprint(rt.Status)] = ok

		path := fiberParam.ReplaceAllString(rt.Path, "{$1}")
		if paths["/api/v1"+path] == nil {
			paths["/api/v1"+path] = map[string]any{}
		}
		method := strings.ToLower(rt.Method)
		if _, dup := paths["/api/v1"+path][method]; dup {
			return nil, fmt.Errorf("openapi: route %s %s is listed twice", rt.Method, rt.Path)
		}
		paths["/api/v1"+path][method] = op
	}

	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "Slipway API",
			"version": OpenAPIVersion,
			"description": "The Slipway control-plane API. Send an API token as Authorization: Bearer slw_…; " +
				"each operation's x-slipway-scope names the permission it needs. Errors are {code, message, details}.",
		},
		"servers":  []any{map[string]any{"url": "/"}},
		"security": []any{map[string]any{"bearer": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas": schemas,
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "An API token (slw_…)."},
			},
		},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return buf.Bytes(), nil
}

func isMutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// operationID is the route's method and path in camel case, e.g.
// putApplicationsAppVariablesVariable: stable, and unique as routes are.
func operationID(rt Route) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(rt.Method))
	for _, word := range strings.FieldsFunc(rt.Path, func(r rune) bool { return r == '/' || r == ':' || r == '-' || r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return b.String()
}

// reflectInto reflects v's type, moves the definitions it needs into
// schemas and returns a reference to it. A name two different Go types
// would share is an error rather than one silently replacing the other.
func reflectInto(r *jsonschema.Reflector, schemas map[string]any, v any) (map[string]any, error) {
	raw, err := json.Marshal(r.Reflect(v))
	if err != nil {
		return nil, fmt.Errorf("openapi: reflect %T: %w", v, err)
	}
	raw = bytes.ReplaceAll(raw, []byte(`"#/$defs/`), []byte(`"`+schemaRef))
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("openapi: reflect %T: %w", v, err)
	}
	defs, _ := s["$defs"].(map[string]any)
	for name, def := range defs {
		if prev, ok := schemas[name]; ok && !sameSchema(prev, def) {
			return nil, fmt.Errorf("openapi: two types are both named %s; give one a distinct name", name)
		}
		schemas[name] = def
	}
	delete(s, "$defs")
	delete(s, "$schema")
	delete(s, "$id")
	return s, nil
}

func sameSchema(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// wireMapper describes types whose JSON differs from their Go shape. The
// manifest points at its own schema (added by addManifestSchemas).
func wireMapper(t reflect.Type) *jsonschema.Schema {
	switch t {
	case manifestType:
		return &jsonschema.Schema{Ref: schemaRef + "Manifest"}
	case valueType:
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}, {Type: "boolean"}}}
	case intType:
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "integer"}, {Type: "string"}}}
	case rawJSONType:
		return &jsonschema.Schema{Description: "Any JSON value."}
	}
	// A manifest table used as a request body on its own (a route, a
	// job) is the manifest schema's own definition of it.
	if t.PkgPath() == manifestType.PkgPath() && manifestTables()[t.Name()] {
		return &jsonschema.Schema{Ref: schemaRef + "Manifest" + t.Name()}
	}
	return nil
}

// manifestTables names the definitions of the manifest's JSON Schema.
var manifestTables = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	raw, err := manifest.Schema()
	if err != nil {
		return out
	}
	var s struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if json.Unmarshal(raw, &s) == nil {
		for name := range s.Definitions {
			out[name] = true
		}
	}
	return out
})

// wireName keeps the API's own type names and prefixes others with their
// package, so a manifest.Route and an api.Route cannot collide.
func wireName(t reflect.Type) string {
	if t.PkgPath() == apiPkgPath || t.PkgPath() == "" {
		return t.Name()
	}
	pkg := t.PkgPath()[strings.LastIndexByte(t.PkgPath(), '/')+1:]
	return strings.ToUpper(pkg[:1]) + pkg[1:] + t.Name()
}

// addManifestSchemas adds the manifest's own JSON Schema, whose tables
// become Manifest<Name> components.
func addManifestSchemas(schemas map[string]any) error {
	raw, err := manifest.Schema()
	if err != nil {
		return fmt.Errorf("openapi: manifest schema: %w", err)
	}
	raw = bytes.ReplaceAll(raw, []byte(`"#/definitions/`), []byte(`"`+schemaRef+"Manifest"))
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("openapi: manifest schema: %w", err)
	}
	defs, _ := s["definitions"].(map[string]any)
	for name, def := range defs {
		schemas["Manifest"+name] = def
	}
	for _, k := range []string{"definitions", "$schema", "$id"} {
		delete(s, k)
	}
	schemas["Manifest"] = s
	return nil
}

var openAPIDoc = sync.OnceValues(OpenAPI)

// openAPIShow serves the document; it needs no token, like any published
// API description.
func openAPIShow(c *fiber.Ctx) error {
	doc, err := openAPIDoc()
	if err != nil {
		return WriteError(c, http.StatusInternalServerError, "internal", err.Error(), nil)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(doc)
}
