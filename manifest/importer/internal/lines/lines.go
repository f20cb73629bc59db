package lines

import (
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
)

// Index maps a source path to the 1-based line its key is on.
type Index map[string]int

// Lookup returns the line of path, or of its nearest ancestor that has one,
// or 0 when neither is known. It is the convert.Diags Lines function.
func (ix Index) Lookup(path string) int {
	for p := path; p != ""; {
		if l, ok := ix[p]; ok {
			return l
		}
		cut := -1
		for i := len(p) - 1; i >= 0; i-- {
			if p[i] == '.' || p[i] == '[' {
				cut = i
				break
			}
		}
		if cut <= 0 {
			break
		}
		p = p[:cut]
	}
	return 0
}

func (ix Index) set(path string, line int) {
	if _, seen := ix[path]; !seen && path != "" {
		ix[path] = line
	}
}

// TOML indexes a TOML document. A document that does not parse yields what
// was indexed before the error: the decoder reports the error itself.
func TOML(data []byte) Index {
	ix := Index{}
	starts := lineStarts(data)
	line := func(r unstable.Range) int {
		return sort.Search(len(starts), func(i int) bool { return starts[i] > int(r.Offset) })
	}
	w := tomlWalker{ix: ix, line: line, arrays: map[string]int{}}
	var p unstable.Parser
	p.Reset(data)
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			table = w.header(e, false)
		case unstable.ArrayTable:
			table = w.header(e, true)
		case unstable.KeyValue:
			w.keyValue(table, e)
		}
	}
	return ix
}

// lineStarts lists the offset at which each line begins.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

type tomlWalker struct {
	ix   Index
	line func(unstable.Range) int
	// arrays counts the elements of each array of tables, by resolved path.
	arrays map[string]int
}

// header resolves a [table] or [[array]] header to its path, following the
// latest element of every array of tables it passes through.
func (w *tomlWalker) header(e *unstable.Node, array bool) string {
	path := ""
	var last *unstable.Node
	keys := e.Key()
	for keys.Next() {
		k := keys.Node()
		last = k
		path = convert.Join(path, string(k.Data))
		if n, isArray := w.arrays[path]; isArray && (!array || !isLast(keys)) {
			path = convert.Index(path, n-1)
		}
		w.ix.set(path, w.line(k.Raw))
	}
	if array && last != nil {
		n := w.arrays[path]
		w.arrays[path] = n + 1
		path = convert.Index(path, n)
		w.ix.set(path, w.line(last.Raw))
	}
	return path
}

func isLast(it unstable.Iterator) bool { return it.IsLast() }

func (w *tomlWalker) keyValue(base string, e *unstable.Node) {
	path := base
	keys := e.Key()
	for keys.Next() {
		k := keys.Node()
		path = convert.Join(path, string(k.Data))
		w.ix.set(path, w.line(k.Raw))
	}
	w.value(path, e.Value())
}

func (w *tomlWalker) value(path string, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable:
		children := v.Children()
		for children.Next() {
			if kv := children.Node(); kv.Kind == unstable.KeyValue {
				w.keyValue(path, kv)
			}
		}
	case unstable.Array:
		children := v.Children()
		for i := 0; children.Next(); i++ {
			item := children.Node()
			at := convert.Index(path, i)
			if item.Raw.Length > 0 {
				w.ix.set(at, w.line(item.Raw))
			}
			w.value(at, item)
		}
	}
}

// YAML indexes a YAML document's mapping keys and sequence items.
func YAML(data []byte) Index {
	ix := Index{}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return ix
	}
	for _, doc := range file.Docs {
		walkYAML(doc.Body, "", ix, 0)
	}
	return ix
}

func walkYAML(n ast.Node, path string, ix Index, depth int) {
	if n == nil || depth > 64 {
		return
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		for _, mv := range v.Values {
			walkYAML(mv, path, ix, depth+1)
		}
	case *ast.MappingValueNode:
		if v.Key == nil || v.Key.GetToken() == nil {
			return
		}
		p := convert.Join(path, strings.TrimSpace(v.Key.GetToken().Value))
		ix.set(p, v.Key.GetToken().Position.Line)
		walkYAML(v.Value, p, ix, depth+1)
	case *ast.SequenceNode:
		for i, item := range v.Values {
			p := convert.Index(path, i)
			if item != nil && item.GetToken() != nil {
				ix[p] = item.GetToken().Position.Line
			}
			walkYAML(item, p, ix, depth+1)
		}
	case *ast.AnchorNode:
		walkYAML(v.Value, path, ix, depth+1)
	case *ast.TagNode:
		walkYAML(v.Value, path, ix, depth+1)
	}
}
