package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Options says where Load finds the configuration besides the defaults.
type Options struct {
	// Path is the file; empty means $SLIPWAY_CONFIG, then Fallback.
	Path string
	// Fallback replaces DefaultPath as the last resort, such as
	// <data-dir>/slipway.toml for slipway dev; it may be missing.
	Fallback string
	// Explicit says the user named Path (--config): then a missing file is
	// an error rather than "use the defaults". A path from SLIPWAY_CONFIG is
	// always explicit.
	Explicit bool
	// LookupEnv reads the environment; nil means os.LookupEnv. Tests pass
	// a map's lookup so they never depend on the process environment.
	LookupEnv func(string) (string, bool)
	// Overrides are explicit command-line flags, applied last.
	Overrides []Override
}

// Override sets one key from a command-line flag.
type Override struct {
	Key    string // dotted key, such as "listen"
	Value  string // parsed like an environment variable
	Source string // shown in errors, such as "flag --listen"
}

// origin is where a key's current value came from, for error messages.
type origin struct {
	source       string
	line, column int
}

// Load builds the configuration: defaults, then the file, then the
// environment, then o.Overrides, then validation. The error is Errors,
// every problem at once, each naming its key and source.
func (o Options) Load() (Config, error) {
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	path, explicit := o.Path, o.Explicit
	if path == "" {
		if p, ok := lookup(EnvConfigPath); ok && p != "" {
			path, explicit = p, true
		} else if o.Fallback != "" {
			path = o.Fallback
		} else {
			path = DefaultPath
		}
	}

	c := Default()
	origins := map[string]origin{}
	var errs Errors
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		// No file at the default place: defaults and environment only.
	case errors.Is(err, fs.ErrNotExist):
		return Config{}, Errors{{Code: CodeFileMissing, Source: path,
			Message: "the configuration file does not exist; write one with `slipway config default > " + path + "` or leave out --config"}}
	case err != nil:
		return Config{}, Errors{{Code: CodeFileUnreadable, Source: path, Message: err.Error()}}
	default:
		var fatal bool
		if errs, fatal = decodeInto(&c, data, path, origins); fatal {
			return Config{}, errs
		}
	}

	errs = append(errs, applyEnv(&c, lookup, origins)...)
	for _, ov := range o.Overrides {
		f, ok := fieldByKey(ov.Key)
		if !ok {
			errs = append(errs, &Error{Key: ov.Key, Code: CodeKeyUnknown, Source: ov.Source, Message: "no such configuration key"})
			continue
		}
		if err := f.set(&c, ov.Value); err != nil {
			errs = append(errs, &Error{Key: f.Key, Code: CodeTypeInvalid, Source: ov.Source, Message: err.Error()})
			continue
		}
		origins[f.Key] = origin{source: ov.Source}
	}
	return finish(c, origins, errs)
}

// finish validates c and returns every problem: those found so far (unknown
// keys, bad variables) and the invalid values, each with where it came from.
func finish(c Config, origins map[string]origin, errs Errors) (Config, error) {
	for _, e := range c.validate() {
		o := origins[e.Key]
		e.Source, e.Line, e.Column = o.source, o.line, o.column
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return Config{}, errs
	}
	return c, nil
}

// decodeInto decodes data strictly over c and records where each key is.
// Unknown keys are reported without stopping, since go-toml has decoded
// every known key by then; syntax and type errors stop decoding (fatal).
func decodeInto(c *Config, data []byte, name string, origins map[string]origin) (errs Errors, fatal bool) {
	d := toml.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	err := d.Decode(c)
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case err == nil:
	case errors.As(err, &strict):
		for i := range strict.Errors {
			e := &strict.Errors[i]
			line, col := e.Position()
			key := strings.Join(e.Key(), ".")
			errs = append(errs, &Error{Key: key, Code: CodeKeyUnknown, Source: name, Line: line, Column: col,
				Message: "unknown key; see docs/configuration.md for every key" + suggest(key)})
		}
	case errors.As(err, &de):
		line, col := de.Position()
		key := strings.Join(de.Key(), ".")
		return Errors{typeError(key, de.Error(), name, line, col)}, true
	default:
		return Errors{{Code: CodeSyntax, Source: name, Message: err.Error()}}, true
	}
	for key, pos := range keyPositions(data) {
		origins[key] = origin{source: name, line: pos[0], column: pos[1]}
	}
	return errs, false
}

// typeError turns go-toml's message, which names Go types, into one that
// names the key's TOML type.
func typeError(key, msg, source string, line, col int) *Error {
	msg = strings.TrimPrefix(msg, "toml: ")
	e := &Error{Key: key, Code: CodeSyntax, Source: source, Line: line, Column: col, Message: msg}
	got, isMismatch := strings.CutPrefix(msg, "cannot decode TOML ")
	got, _, _ = strings.Cut(got, " into ")
	if f, ok := fieldByKey(key); ok {
		e.Code = CodeTypeInvalid
		if isMismatch {
			e.Message = fmt.Sprintf("must be %s, got %s", withArticle(f.typeName()), withArticle(got))
		} else {
			e.Message = fmt.Sprintf("must be %s: %s", withArticle(f.typeName()), msg)
		}
		return e
	}
	if isMismatch {
		for _, s := range sections() {
			if s.Key == key && key != "" {
				e.Code = CodeTypeInvalid
				e.Message = fmt.Sprintf("must be a table ([%s]), got %s", key, withArticle(got))
			}
		}
	}
	return e
}

func withArticle(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// suggest names the known key the user probably meant: one with the same
// last part in another table (http_port at the top level instead of under
// [ingress]), or one a typo or two away (emial, previewz).
func suggest(key string) string {
	last := key[strings.LastIndex(key, ".")+1:]
	best, bestDist := "", 3
	for _, s := range sections() {
		if s.Key != "" && !strings.HasPrefix(key, s.Key+".") {
			if d := editDistance(key, s.Key); d < bestDist {
				best, bestDist = s.Key, d
			}
		}
		for _, f := range s.Fields {
			if f.Key != key && (f.Key == last || strings.HasSuffix(f.Key, "."+last)) {
				return "; did you mean " + f.Key + "?"
			}
			if d := editDistance(key, f.Key); d < bestDist {
				best, bestDist = f.Key, d
			}
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// editDistance is the Levenshtein distance between two short keys.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// keyPositions maps every dotted key in a syntactically valid document to
// the line and column where it is written.
func keyPositions(data []byte) map[string][2]int {
	out := map[string][2]int{}
	var p unstable.Parser
	p.Reset(data)
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			table = joinKeys(&p, "", e.Key(), nil)
		case unstable.KeyValue:
			keyValuePositions(&p, table, e, out)
		}
	}
	return out
}

func keyValuePositions(p *unstable.Parser, prefix string, kv *unstable.Node, out map[string][2]int) {
	var pos [2]int
	key := joinKeys(p, prefix, kv.Key(), &pos)
	out[key] = pos
	if v := kv.Value(); v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			keyValuePositions(p, key, it.Node(), out)
		}
	}
}

// joinKeys appends a (possibly dotted) key to prefix, storing the position
// of its first part in pos when asked.
func joinKeys(p *unstable.Parser, prefix string, it unstable.Iterator, pos *[2]int) string {
	key := prefix
	first := true
	for it.Next() {
		n := it.Node()
		if first && pos != nil {
			s := p.Shape(n.Raw).Start
			*pos = [2]int{s.Line, s.Column}
		}
		first = false
		if key != "" {
			key += "."
		}
		key += string(n.Data)
	}
	return key
}

// applyEnv applies SLIPWAY_<KEY> and the older aliases. An empty variable
// counts as unset, as it always has for DATABASE_URL and friends; two names
// of one key set to different values is an error rather than a guess.
func applyEnv(c *Config, lookup func(string) (string, bool), origins map[string]origin) Errors {
	var errs Errors
	for _, f := range fields() {
		var name, val string
		for _, n := range append([]string{f.Env}, f.Aliases...) {
			v, ok := lookup(n)
			if !ok || v == "" {
				continue
			}
			if name != "" && v != val {
				errs = append(errs, &Error{Key: f.Key, Code: CodeEnvConflict, Source: "env " + n,
					Message: fmt.Sprintf("%s and %s are both set, to different values; unset one", name, n)})
				continue
			}
			if name == "" {
				name, val = n, v
			}
		}
		if name == "" {
			continue
		}
		if err := f.set(c, val); err != nil {
			errs = append(errs, &Error{Key: f.Key, Code: CodeTypeInvalid, Source: "env " + name, Message: err.Error()})
			continue
		}
		origins[f.Key] = origin{source: "env " + name}
	}
	return errs
}
