package tomledit

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// path names a place in the data: table keys and array indices.
type path []any

func (p path) String() string {
	var b strings.Builder
	for i, s := range p {
		if i > 0 {
			b.WriteByte('\x00')
		}
		switch s := s.(type) {
		case int:
			b.WriteString("#" + strconv.Itoa(s))
		default:
			b.WriteString(s.(string))
		}
	}
	return b.String()
}

func (p path) child(s any) path {
	out := make(path, len(p), len(p)+1)
	copy(out, p)
	return append(out, s)
}

func (p path) hasPrefix(q path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// header is the TOML header naming p: its keys without the indices.
func (p path) header() string {
	var parts []string
	for _, s := range p {
		if k, ok := s.(string); ok {
			parts = append(parts, bareOrQuoted(k))
		}
	}
	return strings.Join(parts, ".")
}

// section is the root table or one [header] / [[header]] with the
// key/values under it.
type section struct {
	path  path
	array bool // [[header]]
	// start is where the header line starts; end is just past the line of
	// its last key/value (or of the header). The root section starts at 0.
	start, end int
	kvs        []*keyValue
}

// keyValue is one top-level `key = value` line (or lines, for a
// multi-line value).
type keyValue struct {
	sec *section
	key path // relative to the section; dotted keys have several parts
	// lineStart..lineEnd are its whole lines, trailing comment included;
	// valStart..valEnd the value's bytes.
	lineStart, lineEnd int
	valStart, valEnd   int
}

func (kv *keyValue) path() path {
	p := make(path, 0, len(kv.sec.path)+len(kv.key))
	return append(append(p, kv.sec.path...), kv.key...)
}

// document is a parsed TOML source with its sections in order.
type document struct {
	src      []byte
	sections []*section
}

func parseDocument(src []byte) (*document, error) {
	d := &document{src: src}
	root := &section{path: path{}}
	d.sections = append(d.sections, root)
	cur := root
	arrays := map[string]int{} // resolved array path -> its last index
	var p unstable.Parser
	p.Reset(src)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			array := e.Kind == unstable.ArrayTable
			var keys []string
			first, last := -1, -1
			it := e.Key()
			for it.Next() {
				n := it.Node()
				keys = append(keys, string(n.Data))
				if first < 0 {
					first = int(n.Raw.Offset)
				}
				last = int(n.Raw.Offset + n.Raw.Length)
			}
			if first < 0 {
				return nil, fmt.Errorf("tomledit: a table header without a key")
			}
			var resolved path
			for i, k := range keys {
				resolved = resolved.child(k)
				if i == len(keys)-1 && array {
					n, ok := arrays[resolved.String()]
					if ok {
						n++
					}
					arrays[resolved.String()] = n
					resolved = resolved.child(n)
					continue
				}
				if n, ok := arrays[resolved.String()]; ok {
					resolved = resolved.child(n)
				}
			}
			start := lineStart(src, first)
			end := lineEnd(src, last)
			cur = &section{path: resolved, array: array, start: start, end: end}
			d.sections = append(d.sections, cur)
		case unstable.KeyValue:
			var key path
			keyEnd := 0
			it := e.Key()
			for it.Next() {
				n := it.Node()
				key = append(key, string(n.Data))
				keyEnd = int(n.Raw.Offset + n.Raw.Length)
			}
			kvStart := int(e.Raw.Offset)
			kvEnd := int(e.Raw.Offset + e.Raw.Length)
			// The separator is the first = past the key (a quoted key's
			// closing quote may lie past its node's bytes, an = never).
			valStart := keyEnd
			eq := bytes.IndexByte(src[valStart:kvEnd], '=')
			if eq < 0 {
				return nil, fmt.Errorf("tomledit: no = after key %s", key.header())
			}
			valStart += eq + 1
			for valStart < kvEnd && (src[valStart] == ' ' || src[valStart] == '\t') {
				valStart++
			}
			kv := &keyValue{sec: cur, key: key, lineStart: lineStart(src, kvStart), lineEnd: lineEnd(src, kvEnd), valStart: valStart, valEnd: kvEnd}
			cur.kvs = append(cur.kvs, kv)
			cur.end = kv.lineEnd
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("tomledit: %w", err)
	}
	return d, nil
}

// lineStart is the offset of the start of the line holding off.
func lineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// lineEnd is the offset just past the newline ending the line holding
// off-1 (the end of the document when it has none).
func lineEnd(src []byte, off int) int {
	if off > 0 && off <= len(src) && src[off-1] == '\n' {
		return off
	}
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return len(src)
	}
	return off + i + 1
}

// keyValueAt finds the key/value whose path is p or a prefix of p.
func (d *document) keyValueAt(p path) (*keyValue, bool) {
	for _, s := range d.sections {
		if !p.hasPrefix(s.path) {
			continue
		}
		for _, kv := range s.kvs {
			if p.hasPrefix(kv.path()) {
				return kv, true
			}
		}
	}
	return nil, false
}

// sectionAt finds the section whose header names exactly p.
func (d *document) sectionAt(p path) (*section, bool) {
	want := p.String()
	for _, s := range d.sections {
		if len(s.path) == len(p) && s.path.String() == want {
			return s, true
		}
	}
	return nil, false
}

// under lists what defines something below (or at) p: sections whose path
// starts with p, and key/values whose path does.
func (d *document) under(p path) (secs []*section, kvs []*keyValue) {
	for _, s := range d.sections {
		if len(s.path) > 0 && s.path.hasPrefix(p) {
			secs = append(secs, s)
			continue
		}
		for _, kv := range s.kvs {
			if kv.path().hasPrefix(p) {
				kvs = append(kvs, kv)
			}
		}
	}
	return secs, kvs
}

// scopeEnd is where a new table below p goes: just past the last section
// under the deepest prefix of p that has one (the end of the document when
// none has). Inside an array element it stays before the next element.
func (d *document) scopeEnd(p path) int {
	for n := len(p); n >= 1; n-- {
		end := -1
		for _, s := range d.sections {
			if len(s.path) > 0 && s.path.hasPrefix(p[:n]) && s.end > end {
				end = s.end
			}
		}
		if end >= 0 {
			return end
		}
	}
	return len(d.src)
}
