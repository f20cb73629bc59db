package manifest

import (
	"bytes"
	"reflect"
	"testing"
)

// scribble overwrites every settable string, integer and boolean reachable
// from v, through pointers, slices and maps, so that any memory a clone
// still shares with its original shows up as a change in the original.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			scribble(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			scribble(e)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString("scribbled")
		}
	case reflect.Int, reflect.Int64:
		if v.CanSet() {
			v.SetInt(7)
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	}
}

func TestCloneManifest_SharesNothing(t *testing.T) {
	t.Parallel()
	for _, m := range []*Manifest{decodeTestFile(t, "testdata/hash/notes.toml"), largeManifest(), renderManifest()} {
		m.Spec.Manifest = &ManifestSource{Path: "a.toml", Repository: &Repository{URL: "https://example.com/r.git", Branch: "main"}, Sync: &Sync{Mode: SyncPoll, IntervalSeconds: 300}}
		// The whole document, spec.manifest included, unlike CanonicalJSON.
		before, err := marshalCanonical(m)
		if err != nil {
			t.Fatal(err)
		}
		c := cloneManifest(m)
		if !reflect.DeepEqual(c, m) {
			t.Fatal("clone differs from the original")
		}
		scribble(reflect.ValueOf(c))
		after, _ := marshalCanonical(m)
		if !bytes.Equal(before, after) {
			t.Fatalf("changing the clone changed the original:\n%s\n%s", before, after)
		}
	}
}
