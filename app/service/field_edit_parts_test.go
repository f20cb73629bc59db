package service_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestEditManifest_ConcurrentPartEdits runs a route edit and a job edit of
// the same revision at once, in committed transactions as two API requests
// would: exactly one saves, the other fails with generation_conflict.
func TestEditManifest_ConcurrentPartEdits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	team, err := st.CreateTeam(ctx, "Concurrent", "concurrent-team")
	if err != nil {
		t.Fatal(err)
	}
	b := &applyBundle{st: st, actor: service.Actor{TeamID: team.ID, UserID: "usr_test"}}
	res, err := b.apply(t, header+webService, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	edits := []func(*manifest.Manifest) error{
		service.SetRoute(manifest.Route{Name: "site", Hostname: "notes.example.com", Service: "web", Port: 8080}),
		service.SetJob(manifest.Job{Name: "migrate", Service: "web", Command: []string{"migrate"}}),
	}
	errs := make([]error, len(edits))
	var wg sync.WaitGroup
	for i, edit := range edits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = service.EditManifest(ctx, st, b.actor, b.enqueue, res.Application.ID, &one, edit, false)
		}()
	}
	wg.Wait()
	saved, conflicts := 0, 0
	for _, err := range errs {
		var ie *service.InputError
		switch {
		case err == nil:
			saved++
		case errors.As(err, &ie) && ie.Code == "generation_conflict":
			conflicts++
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	cur, err := st.GetCurrentManifestRevision(ctx, team.ID, res.Application.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode(cur.Manifest, "json")
	if err != nil {
		t.Fatal(err)
	}
	if saved != 1 || conflicts != 1 || cur.Revision != 2 || len(m.Spec.Routes)+len(m.Spec.Jobs) != 1 {
		t.Fatalf("saved %d conflicts %d revision %d routes %d jobs %d; want exactly one edit saved", saved, conflicts, cur.Revision, len(m.Spec.Routes), len(m.Spec.Jobs))
	}
}

func TestRemoveParts_Unknown(t *testing.T) {
	t.Parallel()
	m := &manifest.Manifest{Spec: manifest.Spec{Services: []manifest.Service{{Name: "web"}}}}
	for _, tc := range []struct {
		name string
		edit func(*manifest.Manifest) error
		code string
	}{
		{"route", service.RemoveRoute("x"), "route_unknown"},
		{"job", service.RemoveJob("x"), "job_unknown"},
		{"file", service.RemoveFile("web", "/x"), "file_unknown"},
		{"file of unknown service", service.RemoveFile("db", "/x"), "service_unknown"},
		{"export", service.RemoveExport("web"), "export_unknown"},
		{"import", service.RemoveImport("a", "b"), "import_unknown"},
	} {
		var ie *service.InputError
		if err := tc.edit(m); !errors.As(err, &ie) || ie.Code != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
}
