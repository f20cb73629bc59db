package manifest

import (
	"reflect"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2/unstable"
)

// The fast TOML decoder builds a Manifest in one pass over go-toml's syntax
// tree. It only accepts documents it is sure to read exactly as the
// reflective decoder (decodeTOMLReflect) does: the moment it meets anything
// else (a syntax error, an unknown key, a mistyped value, a redefined key or
// table, a form it does not handle) it gives up and Decode falls back to the
// reflective decoder, which reports the errors with their positions. Valid
// manifests therefore pay for a single parse; the differential tests in
// decode_fast_test.go hold the two decoders to the same results.

// fastKind is how a table in the document came to exist.
type fastKind uint8

const (
	fastImplicit fastKind = iota // a super-table of a header
	fastHeader                   // [table]
	fastDotted                   // created by a dotted key
	fastArray                    // [[array of tables]]
	fastLeaf                     // a value, array or inline table
)

// fastNode is a key of the document and the Go value it fills.
type fastNode struct {
	kind fastKind
	keys []fastEntry // few per table: a slice searches faster than a map
	// target is an addressable struct or a map for tables, the slice for
	// arrays of tables.
	target reflect.Value
	fields map[string]int // a struct target's keys (fastFieldIndex)
	last   *fastNode      // the current element of an array of tables
}

// newFastNode returns a table node filling target.
func newFastNode(kind fastKind, target reflect.Value) *fastNode {
	n := &fastNode{kind: kind, target: target}
	if target.Kind() == reflect.Struct {
		n.fields = fastFieldIndex(target.Type())
	}
	return n
}

// fastDecoder holds the state of one decode.
type fastDecoder struct {
	root fastNode
	// pending map entries whose struct values were filled through a
	// pointer; they are stored when the document is done.
	pending []fastPending
	strings map[string]string
	// data is the document and src the same bytes as one string: values
	// that are plain slices of data become substrings of src instead of
	// allocations of their own.
	data []byte
	src  string
}

// text returns b as a string, a substring of the document when b is a
// slice of it (a string without escapes).
func (d *fastDecoder) text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	off := cap(d.data) - cap(b)
	if off >= 0 && off+len(b) <= len(d.data) && &d.data[off] == &b[0] {
		return d.src[off : off+len(b)]
	}
	return string(b)
}

type fastEntry struct {
	key  string
	node *fastNode
}

// fastLeafNode marks keys that hold a value; it never gets children.
var fastLeafNode = &fastNode{kind: fastLeaf}

// lookup returns the node for a key, without allocating.
func (n *fastNode) lookup(key []byte) (*fastNode, bool) {
	for i := range n.keys {
		if n.keys[i].key == string(key) {
			return n.keys[i].node, true
		}
	}
	return nil, false
}

// str returns key as a string, sharing one copy per distinct key.
func (d *fastDecoder) str(b []byte) string {
	if s, ok := d.strings[string(b)]; ok {
		return s
	}
	s := string(b)
	d.strings[s] = s
	return s
}

type fastPending struct {
	m, key, value reflect.Value
}

// fastFields maps toml keys to struct field indices, per struct type.
var fastFields sync.Map // reflect.Type -> map[string]int

func fastFieldIndex(t reflect.Type) map[string]int {
	if v, ok := fastFields.Load(t); ok {
		return v.(map[string]int)
	}
	idx := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if f.IsExported() && name != "" && name != "-" {
			idx[name] = i
		}
	}
	fastFields.Store(t, idx)
	return idx
}

var (
	fastIntPtrType  = reflect.TypeOf((*Int)(nil))
	fastRepoPtrType = reflect.TypeOf((*Repository)(nil))
	fastValueType   = reflect.TypeOf(Value{})
	fastBoolPtrType = reflect.TypeOf((*bool)(nil))
	fastStringsType = reflect.TypeOf([]string(nil))
)

// decodeTOMLFast returns the manifest, or false when the reflective decoder
// must decide.
func decodeTOMLFast(data []byte) (*Manifest, bool) {
	m := &Manifest{}
	d := &fastDecoder{root: *newFastNode(fastHeader, reflect.ValueOf(m).Elem()), strings: make(map[string]string, 64), data: data, src: string(data)}
	var p unstable.Parser
	p.Reset(data)
	current := &d.root
	for p.NextExpression() {
		e := p.Expression()
		var ok bool
		switch e.Kind {
		case unstable.Table:
			current, ok = d.header(e, false)
		case unstable.ArrayTable:
			current, ok = d.header(e, true)
		case unstable.KeyValue:
			ok = d.keyValue(current, e)
		case unstable.Comment:
			ok = true
		}
		if !ok {
			return nil, false
		}
	}
	if p.Error() != nil {
		return nil, false
	}
	for _, pe := range d.pending {
		pe.m.SetMapIndex(pe.key, pe.value.Elem())
	}
	return m, true
}

// header opens [a.b.c] or [[a.b.c]] and returns the table keys go into.
func (d *fastDecoder) header(e *unstable.Node, array bool) (*fastNode, bool) {
	node := &d.root
	it := e.Key()
	for it.Next() {
		key := it.Node().Data
		last := it.IsLast()
		child, exists := node.lookup(key)
		switch {
		case !last && exists:
			switch child.kind {
			case fastImplicit, fastHeader:
			case fastArray:
				child = child.last
			default:
				return nil, false
			}
		case !last:
			var ok bool
			if child, ok = d.child(node, key, fastImplicit); !ok {
				return nil, false
			}
		case array && exists:
			if child.kind != fastArray {
				return nil, false
			}
			return d.appendElement(child)
		case array:
			slice, ok := d.field(node, key)
			if !ok || slice.Kind() != reflect.Slice || slice.Type().Elem().Kind() != reflect.Struct {
				return nil, false
			}
			child = &fastNode{kind: fastArray, target: slice}
			node.add(d.str(key), child)
			return d.appendElement(child)
		case exists:
			// Defining a table that already exists: leave it to the
			// reflective decoder.
			return nil, false
		default:
			var ok bool
			if child, ok = d.child(node, key, fastHeader); !ok {
				return nil, false
			}
		}
		node = child
	}
	return node, true
}

func (n *fastNode) add(key string, child *fastNode) {
	if n.keys == nil {
		n.keys = make([]fastEntry, 0, 8)
	}
	n.keys = append(n.keys, fastEntry{key: key, node: child})
}

// appendElement adds an element to an array of tables.
func (d *fastDecoder) appendElement(arr *fastNode) (*fastNode, bool) {
	s := arr.target
	s.Set(reflect.Append(s, reflect.New(s.Type().Elem()).Elem()))
	arr.last = newFastNode(fastHeader, s.Index(s.Len()-1))
	return arr.last, true
}

// field returns the addressable Go value for key in a table node: a struct
// field, or a fresh value for a map entry (stored at the end).
func (d *fastDecoder) field(node *fastNode, key []byte) (reflect.Value, bool) {
	t := node.target
	switch t.Kind() {
	case reflect.Struct:
		i, ok := node.fields[string(key)]
		if !ok {
			return reflect.Value{}, false
		}
		return t.Field(i), true
	case reflect.Map:
		elem := t.Type().Elem()
		if elem.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		if t.IsNil() {
			t.Set(reflect.MakeMap(t.Type()))
		}
		ptr := reflect.New(elem)
		d.pending = append(d.pending, fastPending{m: t, key: reflect.ValueOf(d.str(key)), value: ptr})
		return ptr.Elem(), true
	}
	return reflect.Value{}, false
}

// child creates a sub-table node for key.
func (d *fastDecoder) child(node *fastNode, key []byte, kind fastKind) (*fastNode, bool) {
	if node.target.Kind() == reflect.Map && node.target.Type().Elem().Kind() != reflect.Struct {
		return nil, false
	}
	v, ok := d.field(node, key)
	if !ok {
		return nil, false
	}
	if v.Kind() == reflect.Pointer {
		if v.Type() == fastIntPtrType || v.Type().Elem().Kind() != reflect.Struct {
			return nil, false
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == fastValueType {
			return nil, false
		}
	case reflect.Map:
		// Made by the first key: the reflective decoder leaves the map of
		// an empty table nil.
	default:
		return nil, false
	}
	c := newFastNode(kind, v)
	node.add(d.str(key), c)
	return c, true
}

// keyValue sets key = value (the key may be dotted) in a table.
func (d *fastDecoder) keyValue(table *fastNode, kv *unstable.Node) bool {
	node := table
	it := kv.Key()
	for it.Next() {
		key := it.Node().Data
		child, exists := node.lookup(key)
		if it.IsLast() {
			if exists {
				return false
			}
			if !d.setValue(node, key, kv.Value()) {
				return false
			}
			node.add(d.str(key), fastLeafNode)
			return true
		}
		if exists {
			if child.kind != fastDotted {
				return false
			}
		} else {
			var ok bool
			if child, ok = d.child(node, key, fastDotted); !ok {
				return false
			}
		}
		node = child
	}
	return false
}

// setValue stores a value under key in a table node.
func (d *fastDecoder) setValue(node *fastNode, key []byte, v *unstable.Node) bool {
	t := node.target
	if t.Kind() == reflect.Map {
		if t.IsNil() {
			t.Set(reflect.MakeMap(t.Type()))
		}
		switch m := t.Interface().(type) {
		case map[string]string:
			if v.Kind != unstable.String {
				return false
			}
			m[d.str(key)] = d.text(v.Data)
			return true
		case map[string]Value:
			x, ok := d.variable(v)
			m[d.str(key)] = x
			return ok
		}
		elem := t.Type().Elem()
		var val reflect.Value
		switch {
		case elem.Kind() == reflect.String && v.Kind == unstable.String:
			val = reflect.ValueOf(string(v.Data)).Convert(elem)
		case elem == fastValueType:
			x, ok := d.variable(v)
			if !ok {
				return false
			}
			val = reflect.ValueOf(x)
		case elem.Kind() == reflect.Struct && v.Kind == unstable.InlineTable:
			ptr := reflect.New(elem)
			if !d.inlineTable(ptr.Elem(), v) {
				return false
			}
			val = ptr.Elem()
		default:
			return false
		}
		t.SetMapIndex(reflect.ValueOf(d.str(key)).Convert(t.Type().Key()), val)
		return true
	}
	f, ok := d.field(node, key)
	if !ok {
		return false
	}
	return d.assign(f, v)
}

// assign stores a value into a Go value of the manifest types.
func (d *fastDecoder) assign(f reflect.Value, v *unstable.Node) bool {
	switch f.Type() {
	case fastIntPtrType:
		switch v.Kind {
		case unstable.Integer:
			n, ok := fastDecimal(v.Data)
			if !ok {
				return false
			}
			f.Set(reflect.ValueOf(&Int{N: n}))
			return true
		case unstable.String:
			if s := d.text(v.Data); strings.Contains(s, "${{") {
				f.Set(reflect.ValueOf(&Int{Ref: s}))
				return true
			}
		}
		return false
	case fastRepoPtrType:
		switch v.Kind {
		case unstable.String:
			if string(v.Data) != RepositorySelf {
				return false
			}
			f.Set(reflect.ValueOf(&Repository{Self: true}))
			return true
		case unstable.InlineTable:
			r := &Repository{}
			if !d.inlineTable(reflect.ValueOf(r).Elem(), v) {
				return false
			}
			f.Set(reflect.ValueOf(r))
			return true
		}
		return false
	case fastBoolPtrType:
		if v.Kind != unstable.Bool {
			return false
		}
		b := string(v.Data) == "true"
		f.Set(reflect.ValueOf(&b))
		return true
	case fastStringsType:
		if v.Kind != unstable.Array {
			return false
		}
		n := 0
		for children := v.Children(); children.Next(); n++ {
			if children.Node().Kind != unstable.String {
				return false
			}
		}
		if n == 0 {
			return false // empty arrays: let the reflective decoder decide
		}
		out := make([]string, 0, n)
		for children := v.Children(); children.Next(); {
			out = append(out, d.text(children.Node().Data))
		}
		*f.Addr().Interface().(*[]string) = out
		return true
	}
	switch f.Kind() {
	case reflect.String:
		if v.Kind != unstable.String {
			return false
		}
		f.SetString(d.text(v.Data))
		return true
	case reflect.Bool:
		if v.Kind != unstable.Bool {
			return false
		}
		f.SetBool(string(v.Data) == "true")
		return true
	case reflect.Int:
		if v.Kind != unstable.Integer {
			return false
		}
		n, ok := fastDecimal(v.Data)
		if !ok {
			return false
		}
		f.SetInt(n)
		return true
	case reflect.Map:
		if v.Kind != unstable.InlineTable {
			return false
		}
		if f.IsNil() {
			f.Set(reflect.MakeMap(f.Type()))
		}
		return d.inlineTable(f, v)
	case reflect.Struct:
		if v.Kind != unstable.InlineTable {
			return false
		}
		return d.inlineTable(f, v)
	case reflect.Pointer:
		if v.Kind != unstable.InlineTable || f.Type().Elem().Kind() != reflect.Struct {
			return false
		}
		ptr := reflect.New(f.Type().Elem())
		if !d.inlineTable(ptr.Elem(), v) {
			return false
		}
		f.Set(ptr)
		return true
	case reflect.Slice:
		if v.Kind != unstable.Array || f.Type().Elem().Kind() != reflect.Struct {
			return false
		}
		children := v.Children()
		n := 0
		for children.Next() {
			c := children.Node()
			if c.Kind != unstable.InlineTable {
				return false
			}
			f.Set(reflect.Append(f, reflect.New(f.Type().Elem()).Elem()))
			if !d.inlineTable(f.Index(n), c) {
				return false
			}
			n++
		}
		return n > 0
	}
	return false
}

// inlineTable fills a struct or map from an inline table. Empty inline
// tables are left to the reflective decoder.
func (d *fastDecoder) inlineTable(target reflect.Value, v *unstable.Node) bool {
	node := newFastNode(fastHeader, target)
	children := v.Children()
	n := 0
	for children.Next() {
		c := children.Node()
		if c.Kind != unstable.KeyValue || !d.keyValue(node, c) {
			return false
		}
		n++
	}
	return n > 0
}

// variable reads a variable value: a string, a decimal integer or a
// boolean.
func (d *fastDecoder) variable(v *unstable.Node) (Value, bool) {
	switch v.Kind {
	case unstable.String:
		return StringValue(d.text(v.Data)), true
	case unstable.Bool:
		return BoolValue(string(v.Data) == "true"), true
	case unstable.Integer:
		if n, ok := fastDecimal(v.Data); ok {
			return IntValue(n), true
		}
	}
	return Value{}, false
}

// fastDecimal parses a plain decimal integer: an optional minus sign and
// at most 18 digits without a leading zero (so it cannot overflow). Other
// forms (signs, underscores, hexadecimal, octal, binary) are left to the
// reflective decoder.
func fastDecimal(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		if n == 0 {
			return 0, false
		}
		n = -n
	}
	return n, true
}
