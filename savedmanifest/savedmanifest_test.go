package savedmanifest_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

type testBundle struct {
	ctx    context.Context
	st     *store.Store
	tenant storetest.Tenant
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	st := storetest.New(t)
	return &testBundle{ctx: context.Background(), st: st, tenant: storetest.NewTenant(t, st, "alpha", "notes")}
}

func (b *testBundle) save(t *testing.T, doc string) store.ManifestRevision {
	t.Helper()
	rev, err := b.st.CreateManifestRevision(b.ctx, b.tenant.Team.ID, b.tenant.App.ID, store.RevisionParams{Manifest: json.RawMessage(doc)})
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func TestCurrent_NoRevision(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, read := range map[string]func(context.Context, *store.Store, string, string) (*manifest.Manifest, store.ManifestRevision, error){
		"Current": savedmanifest.Current, "CurrentLenient": savedmanifest.CurrentLenient,
	} {
		m, rev, err := read(b.ctx, b.st, b.tenant.Team.ID, b.tenant.App.ID)
		if m != nil || rev.Revision != 0 || err != nil {
			t.Errorf("%s = %v, %+v, %v; want nil, zero revision, nil", name, m, rev, err)
		}
	}
}

// TestCurrent_SameAsLenient saves every example the way apply does
// (decoded, marshalled) and reads it back both ways: for what this
// version saves, the two decoders agree.
func TestCurrent_SameAsLenient(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			src, err := manifest.DecodeFile(f)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := json.Marshal(src)
			if err != nil {
				t.Fatal(err)
			}
			saved := b.save(t, string(doc))
			strict, rev, err := savedmanifest.Current(b.ctx, b.st, b.tenant.Team.ID, b.tenant.App.ID)
			if err != nil || rev.Revision != saved.Revision {
				t.Fatalf("Current: revision %d, %v; want revision %d", rev.Revision, err, saved.Revision)
			}
			lenient, rev, err := savedmanifest.CurrentLenient(b.ctx, b.st, b.tenant.Team.ID, b.tenant.App.ID)
			if err != nil || rev.Revision != saved.Revision {
				t.Fatalf("CurrentLenient: revision %d, %v; want revision %d", rev.Revision, err, saved.Revision)
			}
			if !reflect.DeepEqual(strict, lenient) {
				t.Errorf("strict and lenient decoding differ:\n%+v\n%+v", strict, lenient)
			}
			if strict.Metadata.Name != src.Metadata.Name || len(strict.Spec.Services) != len(src.Spec.Services) {
				t.Errorf("read back %q with %d services, saved %q with %d", strict.Metadata.Name, len(strict.Spec.Services), src.Metadata.Name, len(src.Spec.Services))
			}
		})
	}
}

func TestCurrent_OtherTeam(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.save(t, `{"api_version":"slipway.dev/v1alpha1","kind":"Application","metadata":{"name":"notes"}}`)
	other := storetest.NewTenant(t, b.st, "beta", "notes")
	m, rev, err := savedmanifest.Current(b.ctx, b.st, other.Team.ID, b.tenant.App.ID)
	if m != nil || rev.Revision != 0 || err != nil {
		t.Fatalf("another team's read = %v, %+v, %v; want nothing", m, rev, err)
	}
}

func TestCurrent_Undecodable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		doc         string
		lenientFail bool
	}{
		// A field an earlier version saved and this one does not know.
		{name: "unknown field", doc: `{"api_version":"slipway.dev/v1alpha1","kind":"Application","metadata":{"name":"notes","retired":true}}`},
		{name: "wrong type", doc: `{"api_version":"slipway.dev/v1alpha1","kind":"Application","metadata":{"name":5}}`, lenientFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			saved := b.save(t, tt.doc)
			m, rev, err := savedmanifest.Current(b.ctx, b.st, b.tenant.Team.ID, b.tenant.App.ID)
			var de *savedmanifest.DecodeError
			if m != nil || !errors.As(err, &de) || de.Revision != saved.Revision || rev.Revision != saved.Revision {
				t.Fatalf("Current = %v, revision %d, %v; want a DecodeError for revision %d", m, rev.Revision, err, saved.Revision)
			}
			var fes manifest.Errors
			if !errors.As(err, &fes) {
				t.Errorf("Current's error %v does not carry the field errors", err)
			}
			m, _, err = savedmanifest.CurrentLenient(b.ctx, b.st, b.tenant.Team.ID, b.tenant.App.ID)
			if tt.lenientFail {
				if !errors.As(err, &de) || de.Revision != saved.Revision {
					t.Fatalf("CurrentLenient error = %v; want a DecodeError for revision %d", err, saved.Revision)
				}
				return
			}
			if err != nil || m == nil || m.Metadata.Name != "notes" {
				t.Fatalf("CurrentLenient = %+v, %v; want the manifest, unknown field ignored", m, err)
			}
		})
	}
}
