package store_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func TestStore_Application(t *testing.T) {
	t.Parallel()
	b := setup(t)

	// Names are per team: beta has "notes" too.
	_, err := b.st.CreateApplication(b.ctx, b.a.team.ID, "notes")
	wantConflict(t, err, "name", "application_name_taken")
	_, err = b.st.CreateApplication(b.ctx, b.a.team.ID, "Bad_Name")
	wantErr(t, err, store.ErrInvalid)

	blog, err := b.st.CreateApplication(b.ctx, b.a.team.ID, "blog")
	must(t, err)
	apps, err := b.st.ListApplications(b.ctx, b.a.team.ID)
	must(t, err)
	if len(apps) != 2 || apps[0].Name != "blog" || apps[1].Name != "notes" {
		t.Fatalf("ListApplications = %+v", apps)
	}
	got, err := b.st.GetApplicationByName(b.ctx, b.a.team.ID, "blog")
	must(t, err)
	if got.ID != blog.ID || got.CurrentRevision != 0 {
		t.Fatalf("GetApplicationByName = %+v", got)
	}

	// Soft delete: gone from reads, name free, rows kept until purged.
	must(t, b.st.DeleteApplication(b.ctx, b.a.team.ID, blog.ID))
	_, err = b.st.GetApplication(b.ctx, b.a.team.ID, blog.ID)
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, b.st.DeleteApplication(b.ctx, b.a.team.ID, blog.ID), store.ErrNotFound)
	again, err := b.st.CreateApplication(b.ctx, b.a.team.ID, "blog")
	must(t, err)
	if again.ID == blog.ID {
		t.Fatal("recreated application reused the deleted id")
	}
	must(t, b.st.PurgeApplication(b.ctx, b.a.team.ID, blog.ID))
	// Purging a live application is refused.
	wantErr(t, b.st.PurgeApplication(b.ctx, b.a.team.ID, again.ID), store.ErrNotFound)
}

func TestStore_ManifestRevision(t *testing.T) {
	t.Parallel()
	b := setup(t)
	app := b.a.app

	_, err := b.st.GetCurrentManifestRevision(b.ctx, b.a.team.ID, app.ID)
	wantErr(t, err, store.ErrNotFound)

	for i := 1; i <= 3; i++ {
		rev, err := b.st.CreateManifestRevision(b.ctx, b.a.team.ID, app.ID, store.RevisionParams{
			Manifest: json.RawMessage(`{"kind":"Application","n":` + string(rune('0'+i)) + `}`),
			Source:   "kind = \"Application\"\n", Author: "user:" + b.a.owner.ID,
		})
		must(t, err)
		if rev.Revision != int64(i) || rev.SourceFormat != "toml" {
			t.Fatalf("revision %d = %+v", i, rev)
		}
	}
	cur, err := b.st.GetCurrentManifestRevision(b.ctx, b.a.team.ID, app.ID)
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(cur.Manifest, &m))
	if cur.Revision != 3 || m["n"] != float64(3) {
		t.Fatalf("current = %d %v", cur.Revision, m)
	}
	a, err := b.st.GetApplication(b.ctx, b.a.team.ID, app.ID)
	must(t, err)
	if a.CurrentRevision != 3 {
		t.Fatalf("application current revision = %d", a.CurrentRevision)
	}
	first, err := b.st.GetManifestRevision(b.ctx, b.a.team.ID, app.ID, 1)
	must(t, err)
	if first.Source == "" {
		t.Fatal("source not kept")
	}
	list, err := b.st.ListManifestRevisions(b.ctx, b.a.team.ID, app.ID)
	must(t, err)
	if len(list) != 3 || list[0].Revision != 3 || list[0].Manifest != nil {
		t.Fatalf("ListManifestRevisions = %+v", list)
	}

	// Optimistic concurrency: an edit of revision 2 after 3 was saved.
	_, err = b.st.CreateManifestRevision(b.ctx, b.a.team.ID, app.ID, store.RevisionParams{
		Manifest: json.RawMessage(`{}`), BaseRevision: ptr(int64(2)),
	})
	wantConflict(t, err, "revision", "revision_conflict")
	rev, err := b.st.CreateManifestRevision(b.ctx, b.a.team.ID, app.ID, store.RevisionParams{
		Manifest: json.RawMessage(`{}`), SourceFormat: "json", BaseRevision: ptr(int64(3)),
	})
	must(t, err)
	if rev.Revision != 4 {
		t.Fatalf("revision = %d, want 4", rev.Revision)
	}
	_, err = b.st.CreateManifestRevision(b.ctx, b.a.team.ID, app.ID, store.RevisionParams{Manifest: json.RawMessage(`[]`)})
	wantErr(t, err, store.ErrInvalid)
}

func TestStore_Event(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, verb := range []string{"application.create", "application.apply", "deployment.request"} {
		_, err := b.st.RecordEvent(b.ctx, b.a.team.ID, store.EventParams{
			Actor: "user:" + b.a.owner.ID, Verb: verb, ObjectType: "application", ObjectID: b.a.app.ID,
			Details: map[string]any{"verb": verb},
		})
		must(t, err)
	}
	_, err := b.st.RecordEvent(b.ctx, b.a.team.ID, store.EventParams{Actor: "system", Verb: "team.rename", ObjectType: "team"})
	must(t, err)

	all, err := b.st.ListEvents(b.ctx, b.a.team.ID, store.EventFilter{})
	must(t, err)
	if len(all) != 4 || all[0].Verb != "team.rename" || string(all[0].Details) != "{}" {
		t.Fatalf("ListEvents = %+v", all)
	}
	apps, err := b.st.ListEvents(b.ctx, b.a.team.ID, store.EventFilter{ObjectType: "application", ObjectID: b.a.app.ID, Limit: 2})
	must(t, err)
	if len(apps) != 2 || apps[0].Verb != "deployment.request" {
		t.Fatalf("filtered events = %+v", apps)
	}
	older, err := b.st.ListEvents(b.ctx, b.a.team.ID, store.EventFilter{BeforeID: apps[1].ID})
	must(t, err)
	if len(older) != 1 || older[0].Verb != "application.create" {
		t.Fatalf("paged events = %+v", older)
	}

	// Append-only: the database refuses rewriting history.
	err = b.st.WithTx(b.ctx, func(tx *store.Store) error {
		_, err := tx.Tx().Exec(b.ctx, `UPDATE events SET verb = 'forged' WHERE team_id = $1`, b.a.team.ID)
		return err
	})
	if err == nil {
		t.Fatal("UPDATE events succeeded")
	}
	_, err = b.st.RecordEvent(b.ctx, b.a.team.ID, store.EventParams{Actor: "x", Verb: "Bad Verb", ObjectType: "team"})
	wantErr(t, err, store.ErrInvalid)
}

func TestStore_WithTx(t *testing.T) {
	t.Parallel()
	b := setup(t)
	boom := errors.New("boom")
	err := b.st.WithTx(b.ctx, func(tx *store.Store) error {
		if _, err := tx.CreateApplication(b.ctx, b.a.team.ID, "rolled-back"); err != nil {
			return err
		}
		return boom
	})
	wantErr(t, err, boom)
	_, err = b.st.GetApplicationByName(b.ctx, b.a.team.ID, "rolled-back")
	wantErr(t, err, store.ErrNotFound)

	must(t, b.st.WithTx(b.ctx, func(tx *store.Store) error {
		if tx.Tx() == nil {
			t.Error("Tx() is nil inside WithTx")
		}
		_, err := tx.CreateApplication(b.ctx, b.a.team.ID, "committed")
		return err
	}))
	_, err = b.st.GetApplicationByName(b.ctx, b.a.team.ID, "committed")
	must(t, err)
}
