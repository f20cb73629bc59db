package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestEditManifest_RaceWithAnotherSave saves another revision while an
// edit is between loading and saving: the edit, which named no expected
// revision, must still fail with generation_conflict rather than
// overwrite the save it never saw.
func TestEditManifest_RaceWithAnotherSave(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Committed transactions of their own, as two API requests would have.
	st := storetest.NewSchema(t)
	team, err := st.CreateTeam(ctx, "Race", "race-team")
	if err != nil {
		t.Fatal(err)
	}
	b := &applyBundle{st: st, actor: service.Actor{TeamID: team.ID, UserID: "usr_test"}}
	res, err := b.apply(t, header+webService, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appID := res.Application.ID
	edit := func(m *manifest.Manifest) error {
		if _, err := b.apply(t, header+strings.Replace(webService, "notes:1", "notes:2", 1), service.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		m.Spec.Services[0].Replicas = manifest.NewInt(4)
		return nil
	}
	_, err = service.EditManifest(ctx, b.st, b.actor, b.enqueue, appID, nil, edit, false)
	var ie *service.InputError
	if !errors.As(err, &ie) || ie.Code != "generation_conflict" {
		t.Fatalf("edit racing a save: %v, want generation_conflict", err)
	}
	cur, err := b.st.GetCurrentManifestRevision(ctx, b.actor.TeamID, appID)
	if err != nil || cur.Revision != 2 || !strings.Contains(string(cur.Manifest), "notes:2") {
		t.Fatalf("current = %d %s, %v; want the racing save, revision 2", cur.Revision, cur.Manifest, err)
	}

	// Two edits that both loaded revision 2: the second fails.
	two := int64(2)
	setReplicas := func(n int64) func(*manifest.Manifest) error {
		return service.EditService("web", service.ServiceEdit{Replicas: &n})
	}
	if _, err := service.EditManifest(ctx, b.st, b.actor, b.enqueue, appID, &two, setReplicas(2), false); err != nil {
		t.Fatal(err)
	}
	_, err = service.EditManifest(ctx, b.st, b.actor, b.enqueue, appID, &two, setReplicas(5), false)
	if !errors.As(err, &ie) || ie.Code != "generation_conflict" {
		t.Fatalf("second edit of revision 2: %v, want generation_conflict", err)
	}
}

func TestEditManifest_InvalidResultSavesNothing(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx := context.Background()
	res, err := b.apply(t, header+webService, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = service.EditManifest(ctx, b.st, b.actor, b.enqueue, res.Application.ID, nil, func(m *manifest.Manifest) error {
		m.Spec.Services[0].DependsOn = []string{"missing"}
		return nil
	}, true)
	var me *service.ManifestError
	if !errors.As(err, &me) || len(me.Errors) == 0 {
		t.Fatalf("invalid edit: %v, want a ManifestError", err)
	}
	revs, err := b.st.ListManifestRevisions(ctx, b.actor.TeamID, res.Application.ID)
	if err != nil || len(revs) != 1 || len(b.queued) != 0 {
		t.Fatalf("revisions %d queued %d, %v; want 1 and 0", len(revs), len(b.queued), err)
	}
	_, err = service.EditManifest(ctx, b.st, b.actor, b.enqueue, res.Application.ID, nil, func(m *manifest.Manifest) error {
		m.Metadata.Name = "other"
		return nil
	}, false)
	var ie *service.InputError
	if !errors.As(err, &ie) || ie.Code != "application_rename_unsupported" {
		t.Fatalf("renaming through an edit: %v", err)
	}
}
