package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Position is a 1-based line and column (in bytes) in a manifest source.
type Position struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Positions maps every field path of a TOML or JSON manifest source (such
// as spec.services[1].mounts[0].target) to where its key starts, and every
// array element to where the element starts. Validate works on decoded
// values, which have no positions; WithPositions adds them back. A source
// that does not parse yields the positions read before the syntax error.
func Positions(data []byte) map[string]Position {
	ix := indexSource(data)
	out := make(map[string]Position, len(ix.entries))
	for _, e := range ix.entries {
		if _, ok := out[e.path]; !ok {
			out[e.path] = ix.position(e.off)
		}
	}
	return out
}

// WithPositions returns the errors with Line and Column set from p where
// they are unknown. An error whose own path has no position (a default
// that is not in the source, say) gets the position of its nearest
// ancestor that has one.
func (es Errors) WithPositions(p map[string]Position) Errors {
	if len(p) == 0 {
		return es
	}
	out := make(Errors, len(es))
	for i, e := range es {
		if e.Line == 0 {
			for path := e.Path; path != ""; path = parentPath(path) {
				if pos, ok := p[path]; ok {
					e.Line, e.Column = pos.Line, pos.Column
					break
				}
			}
		}
		out[i] = e
	}
	return out
}

// parentPath drops the last segment of a field path: a key or an index.
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	if strings.HasSuffix(path, `"`) {
		// A quoted key: find its opening quote.
		if i := strings.LastIndex(path[:len(path)-1], `."`); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// joinKey appends a map key or field name to a path. Keys that are not
// plain identifiers are quoted so that paths stay unambiguous.
func joinKey(prefix, key string) string {
	plain := key != ""
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			plain = false
			break
		}
	}
	if !plain {
		key = strconv.Quote(key)
	}
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func joinIndex(prefix string, i int) string {
	return prefix + "[" + strconv.Itoa(i) + "]"
}

// sourceEntry is a key or array element at byte offset off; value is the
// raw text of a scalar value (for quoting mistyped values).
type sourceEntry struct {
	path  string
	off   int
	value string
}

// sourceIndex maps offsets to field paths and back to lines and columns.
type sourceIndex struct {
	data       []byte
	lineStarts []int
	entries    []sourceEntry // by offset
	sorted     bool
}

func newSourceIndex(data []byte) *sourceIndex {
	ix := &sourceIndex{data: data, lineStarts: []int{0}}
	for i, c := range data {
		if c == '\n' {
			ix.lineStarts = append(ix.lineStarts, i+1)
		}
	}
	return ix
}

// indexSource indexes a TOML or a JSON source; JSON starts with '{'.
func indexSource(data []byte) *sourceIndex {
	if isJSONSource(data) {
		ix, _ := indexJSON(data, nil)
		return ix
	}
	return indexTOML(data)
}

func isJSONSource(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(t) > 0 && t[0] == '{'
}

func (ix *sourceIndex) add(path string, off int, value string) {
	if n := len(ix.entries); n > 0 && ix.entries[n-1].off > off {
		ix.sorted = false
	}
	ix.entries = append(ix.entries, sourceEntry{path: path, off: off, value: value})
}

func (ix *sourceIndex) position(off int) Position {
	line := sort.Search(len(ix.lineStarts), func(i int) bool { return ix.lineStarts[i] > off }) - 1
	if line < 0 {
		line = 0
	}
	return Position{Line: line + 1, Column: off - ix.lineStarts[line] + 1}
}

func (ix *sourceIndex) offset(pos Position) int {
	if pos.Line < 1 || pos.Line > len(ix.lineStarts) {
		return -1
	}
	return ix.lineStarts[pos.Line-1] + pos.Column - 1
}

// at returns the last entry starting at or before off.
func (ix *sourceIndex) at(off int) (sourceEntry, bool) {
	if !ix.sorted {
		sort.SliceStable(ix.entries, func(i, j int) bool { return ix.entries[i].off < ix.entries[j].off })
		ix.sorted = true
	}
	i := sort.Search(len(ix.entries), func(i int) bool { return ix.entries[i].off > off }) - 1
	if i < 0 {
		return sourceEntry{}, false
	}
	return ix.entries[i], true
}

// find returns the first entry with the path.
func (ix *sourceIndex) find(path string) (sourceEntry, bool) {
	for _, e := range ix.entries {
		if e.path == path {
			return e, true
		}
	}
	return sourceEntry{}, false
}

// indexTOML walks the TOML syntax tree, numbering arrays of tables the way
// the decoder fills slices.
func indexTOML(data []byte) *sourceIndex { return indexTOMLKeys(data, false) }

// indexTOMLKeys indexes every key, or with repositoriesOnly only the table
// headers and the keys under a repository, which is all Decode needs on
// success and much cheaper.
func indexTOMLKeys(data []byte, repositoriesOnly bool) *sourceIndex {
	ix := newSourceIndex(data)
	ix.sorted = true
	var p unstable.Parser
	p.Reset(data)
	arrays := map[string]int{}
	current := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			path, off := "", -1
			it := e.Key()
			for it.Next() {
				k := it.Node()
				if off < 0 {
					off = int(k.Raw.Offset)
				}
				path = joinKey(path, string(k.Data))
				if it.IsLast() && e.Kind == unstable.ArrayTable {
					break
				}
				if n, ok := arrays[path]; ok {
					path = joinIndex(path, n-1)
				}
			}
			if e.Kind == unstable.ArrayTable {
				n := arrays[path]
				arrays[path] = n + 1
				path = joinIndex(path, n)
			}
			current = path
			// Point at the header's opening bracket, where the line starts.
			for off > 0 && (data[off-1] == '[' || data[off-1] == ' ' || data[off-1] == '\t') {
				off--
			}
			ix.add(path, max(off, 0), "")
		case unstable.KeyValue:
			if repositoriesOnly && !strings.HasSuffix(current, ".repository") {
				it := e.Key()
				if !it.Next() || string(it.Node().Data) != "repository" {
					continue
				}
			}
			ix.tomlKeyValue(&p, current, e)
		}
	}
	return ix
}

func (ix *sourceIndex) tomlKeyValue(p *unstable.Parser, prefix string, kv *unstable.Node) {
	path, off := prefix, -1
	it := kv.Key()
	for it.Next() {
		k := it.Node()
		if off < 0 {
			off = int(k.Raw.Offset)
		}
		path = joinKey(path, string(k.Data))
	}
	v := kv.Value()
	ix.add(path, max(off, 0), scalarText(p, v))
	ix.tomlValue(p, path, v)
}

func (ix *sourceIndex) tomlValue(p *unstable.Parser, path string, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable:
		children := v.Children()
		for children.Next() {
			if c := children.Node(); c.Kind == unstable.KeyValue {
				ix.tomlKeyValue(p, path, c)
			}
		}
	case unstable.Array:
		children := v.Children()
		for i := 0; children.Next(); i++ {
			c := children.Node()
			elem := joinIndex(path, i)
			ix.add(elem, int(c.Raw.Offset), scalarText(p, c))
			ix.tomlValue(p, elem, c)
		}
	}
}

func scalarText(p *unstable.Parser, v *unstable.Node) string {
	switch v.Kind {
	case unstable.Array:
		return "an array"
	case unstable.InlineTable:
		return "a table"
	}
	if v.Raw.Length == 0 {
		return ""
	}
	return string(p.Raw(v.Raw))
}

// errTrailingData is data after the top-level JSON value.
type errTrailingData struct{ offset int }

func (e errTrailingData) Error() string { return "unexpected data after the top-level object" }

// jsonWalker walks a JSON source token by token.
type jsonWalker struct {
	ix   *sourceIndex
	dec  *json.Decoder
	errs Errors
}

// indexJSON walks a JSON source token by token, recording positions and,
// when root is a struct type, every unknown and duplicated key.
func indexJSON(data []byte, root *fieldSet) (*sourceIndex, error) {
	ix := newSourceIndex(data)
	ix.sorted = true
	w := &jsonWalker{ix: ix, dec: json.NewDecoder(bytes.NewReader(data))}
	w.dec.UseNumber()
	err := w.value("", root)
	if err == nil {
		if off := w.start(); off < len(data) {
			if _, terr := w.dec.Token(); !errors.Is(terr, io.EOF) {
				err = errTrailingData{offset: off}
			}
		}
	}
	if err != nil {
		return ix, err
	}
	if len(w.errs) > 0 {
		return ix, w.errs
	}
	return ix, nil
}

// start returns where the next token starts.
func (w *jsonWalker) start() int {
	off := int(w.dec.InputOffset())
	d := w.ix.data
	for off < len(d) {
		switch d[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

func (w *jsonWalker) value(path string, fs *fieldSet) error {
	off := w.start()
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for w.dec.More() {
			koff := w.start()
			ktok, err := w.dec.Token()
			if err != nil {
				return err
			}
			key, _ := ktok.(string)
			kpath := joinKey(path, key)
			w.ix.add(kpath, koff, "")
			var child *fieldSet
			if fs != nil {
				pos := w.ix.position(koff)
				if seen[key] {
					w.errs = append(w.errs, FieldError{Path: kpath, Code: "duplicate_key", Message: "key `" + key + "` appears twice in the same object", Line: pos.Line, Column: pos.Column})
				}
				seen[key] = true
				var ok bool
				child, ok = fs.child(key)
				if !ok {
					w.errs = append(w.errs, FieldError{Path: kpath, Code: "unknown_field", Message: fs.unknownMessage(key, path), Line: pos.Line, Column: pos.Column})
				}
			}
			if err := w.value(kpath, child); err != nil {
				return err
			}
		}
		_, err := w.dec.Token()
		return err
	case json.Delim('['):
		var elem *fieldSet
		if fs != nil {
			elem = fs.elem
		}
		for i := 0; w.dec.More(); i++ {
			epath := joinIndex(path, i)
			w.ix.add(epath, w.start(), "")
			if err := w.value(epath, elem); err != nil {
				return err
			}
		}
		_, err := w.dec.Token()
		return err
	}
	// A scalar: remember its text for quoting a mistyped value.
	if n := len(w.ix.entries); n > 0 && w.ix.entries[n-1].path == path {
		end := int(w.dec.InputOffset())
		if end > off && end <= len(w.ix.data) {
			w.ix.entries[n-1].value = string(w.ix.data[off:end])
		}
	}
	return nil
}
