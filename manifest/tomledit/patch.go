package tomledit

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Patch returns src, a TOML document that decodes to have, rewritten so
// that it decodes to want; have and want are JSON. Only what differs is
// rewritten: a changed value in place, a removed key or table with the
// comment block right above it, a new key after its table's last key, a
// new table after its siblings. Values written inline (arrays, inline
// tables) are rewritten whole. The caller should decode the result and
// compare it with want: data the JSON shape does not show (a default the
// decoder fills in, a value the TOML writes in another form) can make the
// result differ, and then it must not be used.
func Patch(src, have, want []byte) ([]byte, error) {
	d, err := parseDocument(src)
	if err != nil {
		return nil, err
	}
	h, err := parseJSON(have)
	if err != nil {
		return nil, fmt.Errorf("tomledit: have: %w", err)
	}
	w, err := parseJSON(want)
	if err != nil {
		return nil, fmt.Errorf("tomledit: want: %w", err)
	}
	e := &editor{d: d, want: w, replaced: map[*keyValue]bool{}}
	if err := e.diff(path{}, h, w); err != nil {
		return nil, err
	}
	return e.apply()
}

// splice replaces src[start:end] with text.
type splice struct {
	start, end int
	text       string
	seq        int
}

type editor struct {
	d        *document
	want     any
	edits    []splice
	replaced map[*keyValue]bool
}

func (e *editor) splice(start, end int, text string) {
	e.edits = append(e.edits, splice{start: start, end: end, text: text, seq: len(e.edits)})
}

// diff records the edits that turn old into new at p.
func (e *editor) diff(p path, old, new any) error {
	if equal(old, new) {
		return nil
	}
	if kv, ok := e.d.keyValueAt(p); ok && len(p) > 0 {
		return e.replaceKeyValue(kv)
	}
	switch o := old.(type) {
	case *object:
		n, ok := new.(*object)
		if !ok {
			break
		}
		for _, k := range o.keys {
			if v, ok := n.get(k); !ok || v == nil {
				if err := e.remove(p.child(k)); err != nil {
					return err
				}
			}
		}
		for _, k := range n.keys {
			nv := n.vals[k]
			if nv == nil {
				continue
			}
			ov, ok := o.get(k)
			var err error
			if !ok || ov == nil {
				err = e.set(p.child(k), nv)
			} else {
				err = e.diff(p.child(k), ov, nv)
			}
			if err != nil {
				return err
			}
		}
		return nil
	case []any:
		n, ok := new.([]any)
		if secs, _ := e.d.under(p); ok && len(secs) > 0 {
			return e.diffArray(p, o, n)
		}
	}
	return e.set(p, new)
}

// diffArray edits an array of tables written as [[header]] elements: the
// elements removed from it (when new is old less some), else element by
// element, removing or appending at the end.
func (e *editor) diffArray(p path, old, new []any) error {
	if len(new) < len(old) {
		var removed []int
		j := 0
		for i := range old {
			if j < len(new) && equal(old[i], new[j]) {
				j++
				continue
			}
			removed = append(removed, i)
		}
		if j == len(new) {
			for _, i := range removed {
				if err := e.remove(p.child(i)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	n := min(len(old), len(new))
	for i := 0; i < n; i++ {
		if err := e.diff(p.child(i), old[i], new[i]); err != nil {
			return err
		}
	}
	for i := n; i < len(old); i++ {
		if err := e.remove(p.child(i)); err != nil {
			return err
		}
	}
	for i := n; i < len(new); i++ {
		o, ok := new[i].(*object)
		if !ok {
			return fmt.Errorf("tomledit: %s: an array of tables gets an element that is not a table", p.header())
		}
		e.addTable(p.child(i), o, true)
	}
	return nil
}

// set makes p hold v, whatever defined p before.
func (e *editor) set(p path, v any) error {
	if kv, ok := e.d.keyValueAt(p); ok {
		return e.replaceKeyValue(kv)
	}
	if secs, kvs := e.d.under(p); len(secs)+len(kvs) > 0 {
		if err := e.remove(p); err != nil {
			return err
		}
	}
	return e.add(p, v)
}

// lookup returns the wanted value at p.
func (e *editor) lookup(p path) (any, bool) {
	v := e.want
	for _, s := range p {
		switch k := s.(type) {
		case string:
			o, ok := v.(*object)
			if !ok {
				return nil, false
			}
			if v, ok = o.get(k); !ok {
				return nil, false
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil, false
			}
			v = a[k]
		}
	}
	return v, v != nil
}

// replaceKeyValue rewrites a key/value's value as the wanted one, or
// removes it when nothing is wanted there.
func (e *editor) replaceKeyValue(kv *keyValue) error {
	if e.replaced[kv] {
		return nil
	}
	e.replaced[kv] = true
	v, ok := e.lookup(kv.path())
	if !ok {
		e.removeLines(kv.lineStart, kv.lineEnd)
		return nil
	}
	text, err := encodeValue(v)
	if err != nil {
		return err
	}
	e.splice(kv.valStart, kv.valEnd, text)
	return nil
}

// remove deletes whatever defines p or lies below it.
func (e *editor) remove(p path) error {
	if kv, ok := e.d.keyValueAt(p); ok {
		if len(kv.path()) == len(p) {
			if !e.replaced[kv] {
				e.replaced[kv] = true
				e.removeLines(kv.lineStart, kv.lineEnd)
			}
			return nil
		}
		return e.replaceKeyValue(kv)
	}
	secs, kvs := e.d.under(p)
	for _, kv := range kvs {
		if !e.replaced[kv] {
			e.replaced[kv] = true
			e.removeLines(kv.lineStart, kv.lineEnd)
		}
	}
	for _, s := range secs {
		e.removeLines(s.start, s.end)
	}
	return nil
}

// removeLines deletes whole lines, with the comment block right above them
// when a blank line sets it apart, and the blank line the deletion would
// otherwise double.
func (e *editor) removeLines(start, end int) {
	src := e.d.src
	start = e.commentBlockStart(start)
	blankBefore := start == 0 || (start >= 2 && src[start-1] == '\n' && src[start-2] == '\n')
	for blankBefore && end < len(src) && src[end] == '\n' {
		end++
	}
	e.splice(start, end, "")
}

// commentBlockStart extends a line start up over the comment lines right
// above it, when a blank line (or the top of the document) is above them.
func (e *editor) commentBlockStart(start int) int {
	src := e.d.src
	top := start
	for top > 0 {
		prev := lineStart(src, top-1)
		line := strings.TrimSpace(string(src[prev:top]))
		if !strings.HasPrefix(line, "#") {
			if line == "" {
				return top
			}
			return start
		}
		top = prev
	}
	return top
}

// add writes v at p, where nothing defines p.
func (e *editor) add(p path, v any) error {
	if len(p) == 0 {
		return fmt.Errorf("tomledit: cannot replace the whole document")
	}
	switch {
	case isTable(v):
		e.addTable(p, v.(*object), false)
		return nil
	case isTableArray(v):
		for i, el := range v.([]any) {
			e.addTable(p.child(i), el.(*object), true)
		}
		return nil
	}
	text, err := encodeValue(v)
	if err != nil {
		return err
	}
	parent, key := p[:len(p)-1], p[len(p)-1]
	k, ok := key.(string)
	if !ok {
		return fmt.Errorf("tomledit: %s: cannot add an array element as a key", p.header())
	}
	if s, ok := e.d.sectionAt(parent); ok {
		e.insertLine(s.end, s.kvs, bareOrQuoted(k)+" = "+text)
		return nil
	}
	// A table made of dotted keys (env.KEY = "x") gets another one.
	if _, kvs := e.d.under(parent); len(kvs) > 0 {
		last := kvs[len(kvs)-1]
		var rel []string
		for _, s := range p[len(last.sec.path):] {
			rel = append(rel, bareOrQuoted(s.(string)))
		}
		e.insertLine(last.lineEnd, []*keyValue{last}, strings.Join(rel, ".")+" = "+text)
		return nil
	}
	o := &object{keys: []string{k}, vals: map[string]any{k: v}}
	e.addTable(parent, o, false)
	return nil
}

// insertLine adds a key/value line at off, indented as the last of kvs.
func (e *editor) insertLine(off int, kvs []*keyValue, line string) {
	src := e.d.src
	indent := ""
	if len(kvs) > 0 {
		last := kvs[len(kvs)-1]
		l := src[last.lineStart:last.lineEnd]
		indent = string(l[:len(l)-len(bytes.TrimLeft(l, " \t"))])
	}
	prefix := ""
	if off > 0 && src[off-1] != '\n' {
		prefix = "\n"
	}
	e.splice(off, off, prefix+indent+line+"\n")
}

// addTable writes a new table (an array-table element when array) after
// its siblings, its own tables below it.
func (e *editor) addTable(p path, o *object, array bool) {
	var b strings.Builder
	writeTable(&b, p, o, array)
	off := e.d.scopeEnd(p[:len(p)-1])
	prefix := "\n"
	if off > 0 && e.d.src[off-1] != '\n' {
		prefix = "\n\n"
	}
	if off == 0 {
		prefix = ""
	}
	e.splice(off, off, prefix+b.String())
}

// writeTable writes a table as blocks separated by blank lines: its
// header and key/values, then its own tables. A table with nothing but
// tables below it gets no header of its own (they imply it).
func writeTable(b *strings.Builder, p path, o *object, array bool) {
	var blocks []string
	var head strings.Builder
	scalars, tables := 0, 0
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case v == nil:
		case isTable(v) || isTableArray(v):
			tables++
		default:
			text, err := encodeValue(v)
			if err != nil {
				continue
			}
			scalars++
			fmt.Fprintf(&head, "%s = %s\n", bareOrQuoted(k), text)
		}
	}
	if array || scalars > 0 || tables == 0 {
		open, close := "[", "]"
		if array {
			open, close = "[[", "]]"
		}
		blocks = append(blocks, open+p.header()+close+"\n"+head.String())
	}
	for _, k := range o.keys {
		var sub strings.Builder
		switch v := o.vals[k].(type) {
		case *object:
			writeTable(&sub, p.child(k), v, false)
		case []any:
			if !isTableArray(v) {
				continue
			}
			for i, el := range v {
				if i > 0 {
					sub.WriteString("\n")
				}
				writeTable(&sub, p.child(k).child(i), el.(*object), true)
			}
		default:
			continue
		}
		blocks = append(blocks, sub.String())
	}
	b.WriteString(strings.Join(blocks, "\n"))
}

// apply makes the edits, refusing overlapping ones.
func (e *editor) apply() ([]byte, error) {
	sort.SliceStable(e.edits, func(i, j int) bool {
		if e.edits[i].start != e.edits[j].start {
			return e.edits[i].start < e.edits[j].start
		}
		return e.edits[i].seq < e.edits[j].seq
	})
	for i := 1; i < len(e.edits); i++ {
		if e.edits[i].start < e.edits[i-1].end {
			return nil, fmt.Errorf("tomledit: overlapping edits at byte %d", e.edits[i].start)
		}
	}
	out := append([]byte(nil), e.d.src...)
	for i := len(e.edits) - 1; i >= 0; i-- {
		s := e.edits[i]
		out = append(out[:s.start], append([]byte(s.text), out[s.end:]...)...)
	}
	return out, nil
}
