package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
)

// teardowns records the teardown jobs a deletion queues; failing makes the
// enqueue fail, which must roll the deletion back.
type teardowns struct {
	queued  []jobs.EnvironmentTeardownArgs
	failing bool
}

func (q *teardowns) enqueue(_ context.Context, _ *store.Store, args river.JobArgs) error {
	if q.failing {
		return errors.New("queue unavailable")
	}
	q.queued = append(q.queued, args.(jobs.EnvironmentTeardownArgs))
	return nil
}

func (b *promotionBundle) addEnvironment(t *testing.T, p store.EnvironmentParams) store.Environment {
	t.Helper()
	p.ApplicationID = b.app.ID
	if p.Slug == "" {
		p.Slug = p.Name
	}
	e, err := b.st.CreateEnvironment(context.Background(), b.actor.TeamID, p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (b *promotionBundle) exists(t *testing.T, name string) bool {
	t.Helper()
	_, err := b.st.GetEnvironmentByName(context.Background(), b.actor.TeamID, b.app.ID, name)
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func TestDeleteEnvironment_Refusals(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	ctx := context.Background()
	q := &teardowns{}
	del := func(name string) (service.DeletedEnvironment, error) {
		return service.DeleteEnvironment(ctx, b.st, b.actor, q.enqueue, b.app.ID, name)
	}
	canary := b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindEnvironment, Name: "canary"})
	b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindEnvironment, Name: "qa", PromoteFrom: canary.ID})
	b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindEnvironment, Name: "edge", PromoteFrom: canary.ID})

	_, err := del("production")
	wantCodes(t, err, "environment_declared")
	if !strings.Contains(err.Error(), "[spec.environments.production]") {
		t.Errorf("declared refusal does not say which block to remove: %v", err)
	}

	_, err = del("canary")
	wantCodes(t, err, "promotion_source_in_use")
	if !strings.Contains(err.Error(), "edge, qa") {
		t.Errorf("promotion_source_in_use does not name the dependents: %v", err)
	}

	// A requested deployment is never cancelled behind the caller's back.
	d, err := b.st.CreateDeployment(ctx, b.actor.TeamID, store.DeploymentParams{
		EnvironmentID: b.env(t, "qa").ID, Revision: 1, Origin: store.OriginPromotion, Actor: "user:test",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = del("qa")
	wantCodes(t, err, "application_busy")

	_, err = del("nowhere")
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting an unknown environment: %v, want not found", err)
	}
	for _, name := range []string{"production", "canary", "qa"} {
		if !b.exists(t, name) {
			t.Errorf("%s was deleted by a refused request", name)
		}
	}
	if len(q.queued) != 0 {
		t.Fatalf("refusals queued teardowns: %+v", q.queued)
	}
	if _, err := service.CancelDeployment(ctx, b.st, b.actor, q.enqueue, d.ID); err != nil {
		t.Fatal(err)
	}

	// A queue that cannot take the job keeps the environment.
	q.failing = true
	if _, err := del("qa"); err == nil || !b.exists(t, "qa") {
		t.Fatalf("delete with a failing queue: %v; qa exists: %v", err, b.exists(t, "qa"))
	}
	q.failing = false
}

func TestDeleteEnvironment_QueuesTeardownAndDeletes(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	ctx := context.Background()
	q := &teardowns{}
	del := func(name string) (service.DeletedEnvironment, error) {
		return service.DeleteEnvironment(ctx, b.st, b.actor, q.enqueue, b.app.ID, name)
	}
	canary := b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindEnvironment, Name: "canary"})
	qa := b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindEnvironment, Name: "qa", PromoteFrom: canary.ID})
	preview := b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindPreview, Name: "pr-7", Branch: "feature"})

	// The dependent goes first; then its source is free to go.
	got, err := del("qa")
	if err != nil {
		t.Fatal(err)
	}
	if !got.VolumesRetained || got.Environment.ID != qa.ID {
		t.Errorf("deleted = %+v, want qa with volumes retained", got)
	}
	if _, err := del("canary"); err != nil {
		t.Fatal(err)
	}
	// A preview is no environment: deleting it is Previews.Delete's.
	_, err = del("pr-7")
	wantCodes(t, err, service.CodeEnvironmentNotFound)
	if !b.exists(t, preview.Name) {
		t.Fatal("deleting an environment named like a preview deleted the preview")
	}
	want := []jobs.EnvironmentTeardownArgs{
		{TeamID: b.actor.TeamID, EnvironmentID: qa.ID, Name: "qa"},
		{TeamID: b.actor.TeamID, EnvironmentID: canary.ID, Name: "canary"},
	}
	if len(q.queued) != len(want) {
		t.Fatalf("queued %+v, want %+v", q.queued, want)
	}
	for i := range want {
		if q.queued[i] != want[i] {
			t.Errorf("teardown %d = %+v, want %+v", i, q.queued[i], want[i])
		}
	}
	for _, name := range []string{"qa", "canary"} {
		if b.exists(t, name) {
			t.Errorf("%s still exists", name)
		}
	}
	events, err := b.st.ListEvents(ctx, b.actor.TeamID, store.EventFilter{ObjectType: "environment", ObjectID: qa.ID})
	if err != nil || len(events) != 1 || events[0].Verb != "environment.delete" {
		t.Fatalf("events of qa = %+v, %v", events, err)
	}
}

func TestDeleteApplication_QueuesOneTeardownPerEnvironment(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	ctx := context.Background()
	b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindPreview, Name: "pr-3", Branch: "feature"})
	envs, err := b.st.ListEnvironments(ctx, b.actor.TeamID, b.app.ID)
	if err != nil || len(envs) != 3 {
		t.Fatalf("environments = %d, %v; want staging, production and a preview", len(envs), err)
	}

	q := &teardowns{failing: true}
	if err := service.DeleteApplication(ctx, b.st, b.actor, q.enqueue, b.app.ID); err == nil {
		t.Fatal("deleting with a failing queue succeeded")
	}
	if _, err := b.st.GetApplication(ctx, b.actor.TeamID, b.app.ID); err != nil {
		t.Fatalf("the application is gone although its teardown could not be queued: %v", err)
	}

	q.failing = false
	if err := service.DeleteApplication(ctx, b.st, b.actor, q.enqueue, b.app.ID); err != nil {
		t.Fatal(err)
	}
	queued := map[string]jobs.EnvironmentTeardownArgs{}
	for _, a := range q.queued {
		queued[a.EnvironmentID] = a
	}
	if len(q.queued) != len(envs) || len(queued) != len(envs) {
		t.Fatalf("queued %+v for %d environments", q.queued, len(envs))
	}
	for _, e := range envs {
		a, ok := queued[e.ID]
		if !ok || a.TeamID != b.actor.TeamID || a.Name != e.Name || a.Preview != (e.Kind == store.KindPreview) {
			t.Errorf("teardown of %s = %+v (queued: %v)", e.Name, a, ok)
		}
	}
	if _, err := b.st.GetApplication(ctx, b.actor.TeamID, b.app.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("application after delete: %v", err)
	}
}
