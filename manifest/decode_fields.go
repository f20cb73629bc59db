package manifest

import (
	"reflect"
	"strings"
	"sync"
)

// fieldSet describes which keys a part of the manifest accepts. It is built
// once from the Go types, so the JSON walk can report every unknown key (the
// standard decoder stops at the first, without a position) and unknown-field
// messages can list the expected keys.
type fieldSet struct {
	kind   reflect.Kind // reflect.Struct, reflect.Map or reflect.Slice
	names  []string     // struct keys in declaration order
	fields map[string]*fieldSet
	elem   *fieldSet // map values and slice elements
}

var (
	manifestFieldsOnce sync.Once
	manifestFieldSet   *fieldSet
	repositoryGoType   = reflect.TypeOf(Repository{})
	intGoType          = reflect.TypeOf(Int{})
	valueGoType        = reflect.TypeOf(Value{})
)

func manifestFields() *fieldSet {
	manifestFieldsOnce.Do(func() {
		manifestFieldSet = buildFieldSet(reflect.TypeOf(Manifest{}))
	})
	return manifestFieldSet
}

// buildFieldSet returns nil for scalars and for types that decode
// themselves from scalars (Int, Value).
func buildFieldSet(t reflect.Type) *fieldSet {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case intGoType, valueGoType:
		return nil
	case repositoryGoType:
		t = reflect.TypeOf(repositoryFields{})
	}
	switch t.Kind() {
	case reflect.Struct:
		fs := &fieldSet{kind: reflect.Struct, fields: map[string]*fieldSet{}}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			fs.names = append(fs.names, name)
			fs.fields[name] = buildFieldSet(f.Type)
		}
		return fs
	case reflect.Map:
		return &fieldSet{kind: reflect.Map, elem: buildFieldSet(t.Elem())}
	case reflect.Slice:
		return &fieldSet{kind: reflect.Slice, elem: buildFieldSet(t.Elem())}
	}
	return nil
}

// child returns the set for key, and false when a struct has no such key.
func (fs *fieldSet) child(key string) (*fieldSet, bool) {
	switch fs.kind {
	case reflect.Map:
		return fs.elem, true
	case reflect.Struct:
		c, ok := fs.fields[key]
		return c, ok
	}
	return nil, true
}

// at follows a key path without indices (as the TOML decoder reports it).
func (fs *fieldSet) at(keys []string) *fieldSet {
	for _, k := range keys {
		if fs == nil {
			return nil
		}
		for fs != nil && fs.kind == reflect.Slice {
			fs = fs.elem
		}
		if fs == nil {
			return nil
		}
		fs, _ = fs.child(k)
	}
	for fs != nil && fs.kind == reflect.Slice {
		fs = fs.elem
	}
	return fs
}

func (fs *fieldSet) unknownMessage(key, parent string) string {
	where := parent
	if where == "" {
		where = "the document"
	}
	msg := "unknown field `" + key + "` in " + where
	if fs != nil && fs.kind == reflect.Struct && len(fs.names) > 0 {
		msg += "; expected one of " + strings.Join(fs.names, ", ")
	}
	return msg
}
