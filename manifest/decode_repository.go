package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// RepositorySelf is the string form of a repository that names the
// manifest's own repository.
const RepositorySelf = "self"

// repositoryFields is Repository without its custom (un)marshalling, so the
// table form decodes strictly with the standard decoders.
type repositoryFields struct {
	URL    string `toml:"url,omitempty" json:"url,omitempty"`
	Branch string `toml:"branch,omitempty" json:"branch,omitempty"`
	Commit string `toml:"commit,omitempty" json:"commit,omitempty"`
}

func (r *Repository) setFields(f repositoryFields) {
	*r = Repository{URL: f.URL, Branch: f.Branch, Commit: f.Commit}
}

// UnmarshalTOML accepts the string "self", an inline table or a table.
// Problems are recorded rather than returned, so that Decode can report them
// with the field path and position the decoder does not pass here.
//
// The decoder hands a table inside an array of tables the key-values of
// every element's table at once, so Decode fills table forms again from the
// syntax tree (fillRepositoryTables); this method alone is only right for
// tables outside arrays and for the other forms.
func (r *Repository) UnmarshalTOML(data []byte) error {
	*r = Repository{}
	s := bytes.TrimSpace(data)
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		str, ok := unquote(string(s), true)
		if ok && str == RepositorySelf {
			r.Self = true
			return nil
		}
		r.problem = "expected the string \"self\" or a table with url, branch and commit, got " + quoteValue(string(s))
		return nil
	}
	doc := data
	inline := len(s) > 0 && s[0] == '{'
	if inline {
		doc = append([]byte("v = "), s...)
	} else if len(s) > 0 && s[0] != '[' && !startsLikeKey(s) {
		r.problem = "expected the string \"self\" or a table with url, branch and commit, got " + quoteValue(string(s))
		return nil
	}
	var fields repositoryFields
	var err error
	if inline {
		var wrapped struct {
			V repositoryFields `toml:"v"`
		}
		err = toml.NewDecoder(bytes.NewReader(doc)).DisallowUnknownFields().Decode(&wrapped)
		fields = wrapped.V
	} else {
		err = toml.NewDecoder(bytes.NewReader(doc)).DisallowUnknownFields().Decode(&fields)
	}
	r.setFields(fields)
	r.recordProblem(err)
	return nil
}

// startsLikeKey reports whether a table's raw body starts with a key.
func startsLikeKey(s []byte) bool {
	c := s[0]
	return c == '_' || c == '-' || c == '#' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (r *Repository) recordProblem(err error) {
	if err == nil {
		return
	}
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case errors.As(err, &strict) && len(strict.Errors) > 0:
		key := strict.Errors[0].Key()
		r.problemKey = key[len(key)-1]
		r.problem = "unknown field `" + r.problemKey + "`, expected one of url, branch, commit"
	case errors.As(err, &de):
		key := de.Key()
		if len(key) > 0 {
			r.problemKey = key[len(key)-1]
		}
		r.problem = typeMismatchMessage(de.Error(), "")
	default:
		r.problem = "expected the string \"self\" or a table with url, branch and commit"
	}
}

// UnmarshalJSON accepts the string "self" or an object.
func (r *Repository) UnmarshalJSON(data []byte) error {
	*r = Repository{}
	s := bytes.TrimSpace(data)
	if len(s) > 0 && s[0] == '"' {
		var str string
		if err := json.Unmarshal(s, &str); err == nil && str == RepositorySelf {
			r.Self = true
			return nil
		}
		r.problem = "expected the string \"self\" or an object with url, branch and commit, got " + quoteValue(string(s))
		return nil
	}
	if len(s) == 0 || s[0] != '{' {
		r.problem = "expected the string \"self\" or an object with url, branch and commit, got " + quoteValue(string(s))
		return nil
	}
	var fields repositoryFields
	dec := json.NewDecoder(bytes.NewReader(s))
	dec.DisallowUnknownFields()
	err := dec.Decode(&fields)
	r.setFields(fields)
	if err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			r.problemKey = te.Field
			r.problem = "expected " + friendlyType(te.Type.String()) + ", got " + te.Value
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			r.problemKey = strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			r.problem = "unknown field `" + r.problemKey + "`, expected one of url, branch, commit"
		default:
			r.problem = err.Error()
		}
	}
	return nil
}

// MarshalJSON writes "self" or the object.
func (r Repository) MarshalJSON() ([]byte, error) {
	if r.Self {
		return json.Marshal(RepositorySelf)
	}
	return json.Marshal(repositoryFields{URL: r.URL, Branch: r.Branch, Commit: r.Commit})
}

// MarshalTOML writes "self" or an inline table.
func (r Repository) MarshalTOML() ([]byte, error) {
	if r.Self {
		return []byte(`"self"`), nil
	}
	var b strings.Builder
	b.WriteString("{ ")
	sep := ""
	for _, kv := range [...][2]string{{"url", r.URL}, {"branch", r.Branch}, {"commit", r.Commit}} {
		if kv[1] == "" {
			continue
		}
		q, err := json.Marshal(kv[1])
		if err != nil {
			return nil, err
		}
		b.WriteString(sep + kv[0] + " = ")
		b.Write(q)
		sep = ", "
	}
	b.WriteString(" }")
	if sep == "" {
		return []byte("{}"), nil
	}
	return []byte(b.String()), nil
}

// repositoryTablePrefix returns the repository path a field path lies
// under (spec.manifest.repository or spec.services[N].source.repository)
// and the service index (-1 for spec.manifest).
func repositoryTablePrefix(path string) (prefix string, service int, ok bool) {
	const manifestRepo = "spec.manifest.repository"
	if strings.HasPrefix(path, manifestRepo) {
		return manifestRepo, -1, true
	}
	rest, found := strings.CutPrefix(path, "spec.services[")
	if !found {
		return "", 0, false
	}
	end := strings.IndexByte(rest, ']')
	if end <= 0 || !strings.HasPrefix(rest[end:], "].source.repository") {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[:end])
	if err != nil {
		return "", 0, false
	}
	return path[:len("spec.services[")+end] + "].source.repository", n, true
}

// fillRepositoryTables sets every repository written as a table or inline
// table from the syntax tree, strictly: its keys are url, branch and commit,
// each a string.
func fillRepositoryTables(m *Manifest, ix *sourceIndex) Errors {
	var errs Errors
	fresh := map[**Repository]bool{}
	for _, e := range ix.entries {
		prefix, si, ok := repositoryTablePrefix(e.path)
		if !ok {
			continue
		}
		// A [...repository] header (its entry has no value) opens a table
		// that may stay empty; it must not keep the merged keys either.
		header := e.path == prefix && e.value == ""
		if !header && (len(e.path) <= len(prefix)+1 || e.path[len(prefix)] != '.') {
			continue
		}
		var slot **Repository
		switch {
		case si < 0 && m.Spec.Manifest != nil:
			slot = &m.Spec.Manifest.Repository
		case si >= 0 && si < len(m.Spec.Services):
			slot = &m.Spec.Services[si].Source.Repository
		default:
			continue
		}
		if !fresh[slot] {
			// Whatever UnmarshalTOML made of the merged tables is replaced.
			*slot = &Repository{}
			fresh[slot] = true
		}
		if header {
			continue
		}
		r := *slot
		key := e.path[len(prefix)+1:]
		pos := ix.position(e.off)
		var field *string
		switch key {
		case "url":
			field = &r.URL
		case "branch":
			field = &r.Branch
		case "commit":
			field = &r.Commit
		default:
			name, _, _ := strings.Cut(key, ".")
			errs = append(errs, FieldError{Path: e.path, Code: "unknown_field", Message: "unknown field `" + name + "` in " + prefix + "; expected one of url, branch, commit", Line: pos.Line, Column: pos.Column})
			continue
		}
		str, isString := unquote(e.value, true)
		if !isString {
			errs = append(errs, FieldError{Path: e.path, Code: "type_mismatch", Message: "expected a string, got " + describeRaw(e.value), Line: pos.Line, Column: pos.Column})
			continue
		}
		*field = str
	}
	return errs
}
