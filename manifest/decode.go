package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// Manifest source formats accepted by Decode.
const (
	formatTOML = "toml"
	formatJSON = "json"
)

// MaxTOMLBytes caps TOML sources: the decoder holds the whole document and
// its syntax tree in memory, and no sensible manifest comes close.
const MaxTOMLBytes = 256 << 10

// Decode parses a TOML or JSON manifest strictly. Unknown fields, duplicate
// keys, wrong types and syntax errors are Errors naming the field path, the
// line and the column, and for a wrong type the value. Decode does not
// validate or apply defaults: call Validate and ApplyDefaults.
func Decode(data []byte, format string) (*Manifest, error) {
	switch strings.ToLower(format) {
	case formatTOML, "":
		return decodeTOML(data)
	case formatJSON:
		return decodeJSON(data)
	}
	return nil, Errors{{Code: "format_invalid", Message: fmt.Sprintf("unsupported manifest format %q; use toml or json", format)}}
}

// DecodeFile reads and decodes a manifest file: JSON when its name ends in
// .json, TOML otherwise.
func DecodeFile(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", path, err)
	}
	format := formatTOML
	if strings.EqualFold(filepath.Ext(path), ".json") {
		format = formatJSON
	}
	return Decode(data, format)
}

func decodeTOML(data []byte) (*Manifest, error) {
	if len(data) <= MaxTOMLBytes {
		if m, ok := decodeTOMLFast(data); ok {
			return m, nil
		}
	}
	return decodeTOMLReflect(data)
}

// decodeTOMLReflect is the reflective decoder: go-toml's Unmarshal and a
// second look at the syntax tree for positions and repository tables. It
// decides every document the fast decoder (decode_fast.go) gives up on, and
// is the reference the fast decoder is tested against.
func decodeTOMLReflect(data []byte) (*Manifest, error) {
	if len(data) > MaxTOMLBytes {
		return nil, Errors{{Code: "manifest_too_large", Message: fmt.Sprintf("the manifest is %d bytes; TOML manifests are at most %d bytes (256 KiB)", len(data), MaxTOMLBytes), Line: 1, Column: 1}}
	}
	var m Manifest
	err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().EnableUnmarshalerInterface().Decode(&m)
	if err != nil {
		return nil, tomlErrors(data, err)
	}
	var ix *sourceIndex
	if repositoryTablesMayMerge(data) {
		if errs := fillRepositoryTables(&m, indexTOMLKeys(data, true)); len(errs) > 0 {
			return nil, errs
		}
	}
	if errs := deferredProblems(&m); len(errs) > 0 {
		if ix == nil {
			ix = indexTOML(data)
		}
		return nil, locate(ix, errs)
	}
	return &m, nil
}

// repositoryTablesMayMerge reports whether the source has more than one
// repository written as a table (or with dotted keys), the case in which the
// decoder merges them (see Repository.UnmarshalTOML).
func repositoryTablesMayMerge(data []byte) bool {
	if !bytes.Contains(data, []byte("repository")) {
		return false
	}
	n := 0
	for _, pattern := range [...]string{"repository]", "repository ]", `repository"]`, "repository']", "repository.", "repository ."} {
		n += bytes.Count(data, []byte(pattern))
	}
	return n > 1
}

func tomlErrors(data []byte, err error) Errors {
	ix := indexTOML(data)
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case errors.As(err, &strict):
		errs := make(Errors, 0, len(strict.Errors))
		for i := range strict.Errors {
			e := &strict.Errors[i]
			line, col := e.Position()
			key := e.Key()
			path := strings.Join(key, ".")
			if entry, ok := ix.at(ix.offset(Position{line, col})); ok {
				path = entry.path
			}
			name := ""
			if len(key) > 0 {
				name = key[len(key)-1]
			}
			parent := manifestFields().at(key[:max(len(key)-1, 0)])
			errs = append(errs, FieldError{Path: path, Code: "unknown_field", Message: parent.unknownMessage(name, parentPath(path)), Line: line, Column: col})
		}
		return errs
	case errors.As(err, &de):
		line, col := de.Position()
		path := strings.Join(de.Key(), ".")
		raw := ""
		if entry, ok := ix.at(ix.offset(Position{line, col})); ok && path != "" {
			path, raw = entry.path, entry.value
			if pos := ix.position(entry.off); pos.Line == line {
				col = pos.Column
			}
		}
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if strings.HasPrefix(msg, "cannot decode") || strings.Contains(msg, "does not fit") || strings.Contains(msg, "out of range") || strings.Contains(msg, "too large") {
			return Errors{{Path: path, Code: "type_mismatch", Message: typeMismatchMessage(msg, raw), Line: line, Column: col}}
		}
		if strings.Contains(msg, "already defined") {
			return Errors{{Path: path, Code: "duplicate_key", Message: msg, Line: line, Column: col}}
		}
		return Errors{{Path: path, Code: "toml_syntax", Message: "invalid TOML: " + msg, Line: line, Column: col}}
	}
	return Errors{{Code: "toml_syntax", Message: "invalid TOML: " + err.Error()}}
}

// tomlTypeError matches the decoder's "cannot decode TOML <kind> into ...
// of type <type>" messages.
var tomlTypeError = regexp.MustCompile(`^cannot decode (?:TOML )?(.+?) into (?:struct field \S+ of type |a slot of type |a value of type |a )?(\S+)$`)

// typeMismatchMessage rewrites a decoder message into "expected an integer,
// got string "three"", quoting the value when it is known.
func typeMismatchMessage(msg, raw string) string {
	m := tomlTypeError.FindStringSubmatch(msg)
	if m == nil {
		if raw != "" {
			return msg + ": got " + quoteValue(raw)
		}
		return msg
	}
	got := m[1]
	if raw != "" && raw != "an array" && raw != "a table" {
		got += " " + quoteValue(raw)
	}
	return "expected " + friendlyType(m[2]) + ", got " + got
}

func friendlyType(goType string) string {
	t := strings.TrimPrefix(goType, "*")
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case t == "[]string":
		return "an array of strings"
	case strings.HasPrefix(t, "[]"):
		return "an array of tables"
	case t == "map[string]string":
		return "a table of strings"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return "a table"
	}
	return t
}

// quoteValue shortens and quotes a source value for a message.
func quoteValue(raw string) string {
	raw = strings.TrimSpace(raw)
	const max = 60
	if len(raw) > max {
		raw = raw[:max] + "…"
	}
	if strings.HasPrefix(raw, `"`) && strings.HasSuffix(raw, `"`) && len(raw) > 1 {
		return raw
	}
	return strconv.Quote(raw)
}

func decodeJSON(data []byte) (*Manifest, error) {
	ix, err := indexJSON(data, manifestFields())
	if err != nil {
		var fes Errors
		if errors.As(err, &fes) {
			return nil, locate(ix, fes)
		}
		return nil, Errors{jsonSyntaxError(ix, err)}
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			fe := FieldError{Path: te.Field, Code: "type_mismatch"}
			raw := ""
			if entry, ok := ix.at(int(te.Offset) - 1); ok {
				fe.Path, raw = entry.path, entry.value
				pos := ix.position(entry.off)
				fe.Line, fe.Column = pos.Line, pos.Column
			}
			if fe.Line == 0 {
				fe.Line, fe.Column = 1, 1
			}
			fe.Message = "expected " + friendlyType(te.Type.String()) + ", got " + te.Value
			if raw != "" {
				fe.Message += " " + quoteValue(raw)
			}
			return nil, Errors{fe}
		}
		return nil, Errors{jsonSyntaxError(ix, err)}
	}
	if errs := deferredProblems(&m); len(errs) > 0 {
		return nil, locate(ix, errs)
	}
	return &m, nil
}

func jsonSyntaxError(ix *sourceIndex, err error) FieldError {
	fe := FieldError{Code: "json_malformed", Message: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	var se *json.SyntaxError
	var trailing errTrailingData
	if errors.As(err, &trailing) {
		pos := ix.position(trailing.offset)
		fe.Line, fe.Column = pos.Line, pos.Column
	} else if errors.As(err, &se) {
		pos := ix.position(int(se.Offset))
		fe.Line, fe.Column = pos.Line, pos.Column
		if entry, ok := ix.at(int(se.Offset)); ok {
			fe.Path = entry.path
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		pos := ix.position(len(ix.data))
		fe.Line, fe.Column = pos.Line, pos.Column
		fe.Message = "invalid JSON: the document ends early"
	}
	return fe
}

// locate adds positions to errors that have none.
func locate(ix *sourceIndex, errs Errors) Errors {
	for i := range errs {
		if errs[i].Line != 0 {
			continue
		}
		for path := errs[i].Path; path != ""; path = parentPath(path) {
			if e, ok := ix.find(path); ok {
				pos := ix.position(e.off)
				errs[i].Line, errs[i].Column = pos.Line, pos.Column
				break
			}
		}
	}
	return errs
}

// deferredProblems reports values the custom unmarshallers recorded as
// mistyped: integers, variable values and repositories.
func deferredProblems(m *Manifest) Errors {
	var errs Errors
	eachInt(m, func(path string, i *Int) {
		if i.bad != "" {
			errs = append(errs, FieldError{Path: path, Code: "type_mismatch", Message: "expected an integer or a ${{ }} reference, got " + describeRaw(i.bad)})
		}
	})
	eachVariableTable(m, func(path string, vars map[string]Value) {
		for _, name := range sortedKeys(vars) {
			if v := vars[name]; v.bad != "" {
				errs = append(errs, FieldError{Path: joinKey(path, name), Code: "type_mismatch", Message: "variables are strings, integers or booleans, got " + describeRaw(v.bad)})
			}
		}
	})
	eachRepository(m, func(path string, r *Repository) {
		if r.problem == "" {
			return
		}
		p := path
		if r.problemKey != "" {
			p = joinKey(path, r.problemKey)
		}
		code := "type_mismatch"
		if strings.HasPrefix(r.problem, "unknown field") {
			code = "unknown_field"
		}
		errs = append(errs, FieldError{Path: p, Code: code, Message: r.problem})
	})
	return errs
}

func describeRaw(raw string) string {
	switch {
	case strings.HasPrefix(raw, "["):
		return "an array"
	case strings.HasPrefix(raw, "{"):
		return "a table"
	case strings.HasPrefix(raw, `"`) || strings.HasPrefix(raw, "'"):
		return "string " + quoteValue(raw)
	case raw == "true" || raw == "false":
		return "boolean " + raw
	}
	return quoteValue(raw)
}

// eachInt calls fn for every integer setting that is present.
func eachInt(m *Manifest, fn func(path string, i *Int)) {
	visit := func(path string, i *Int) {
		if i != nil {
			fn(path, i)
		}
	}
	for si := range m.Spec.Services {
		s := &m.Spec.Services[si]
		p := joinIndex("spec.services", si)
		visit(p+".replicas", s.Replicas)
		if h := s.Healthcheck; h != nil {
			visit(p+".healthcheck.port", h.Port)
			visit(p+".healthcheck.interval_seconds", h.IntervalSeconds)
			visit(p+".healthcheck.timeout_seconds", h.TimeoutSeconds)
			visit(p+".healthcheck.start_period_seconds", h.StartPeriodSeconds)
			visit(p+".healthcheck.retries", h.Retries)
		}
		if r := s.Resources; r != nil {
			visit(p+".resources.cpu_millis", r.CPUMillis)
			visit(p+".resources.memory_bytes", r.MemoryBytes)
		}
		if r := s.Rollout; r != nil {
			visit(p+".rollout.monitor_seconds", r.MonitorSeconds)
		}
		if pg := s.Postgres; pg != nil {
			visit(p+".postgres.port", pg.Port)
		}
	}
	for ji := range m.Spec.Jobs {
		visit(joinIndex("spec.jobs", ji)+".timeout_seconds", m.Spec.Jobs[ji].TimeoutSeconds)
	}
	for bi := range m.Spec.Backups {
		p := joinIndex("spec.backups", bi)
		visit(p+".keep_last", m.Spec.Backups[bi].KeepLast)
		visit(p+".keep_days", m.Spec.Backups[bi].KeepDays)
	}
}

// eachVariableTable calls fn for every variables table, in a stable order.
func eachVariableTable(m *Manifest, fn func(path string, vars map[string]Value)) {
	if m.Spec.Variables != nil {
		fn("spec.variables", m.Spec.Variables)
	}
	for _, name := range sortedKeys(m.Spec.Environments) {
		if vars := m.Spec.Environments[name].Variables; vars != nil {
			fn(joinKey(joinKey("spec.environments", name), "variables"), vars)
		}
	}
	if m.Spec.Previews != nil && m.Spec.Previews.Variables != nil {
		fn("spec.previews.variables", m.Spec.Previews.Variables)
	}
}

func eachRepository(m *Manifest, fn func(path string, r *Repository)) {
	for si := range m.Spec.Services {
		if r := m.Spec.Services[si].Source.Repository; r != nil {
			fn(joinIndex("spec.services", si)+".source.repository", r)
		}
	}
	if m.Spec.Manifest != nil && m.Spec.Manifest.Repository != nil {
		fn("spec.manifest.repository", m.Spec.Manifest.Repository)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
