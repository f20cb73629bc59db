package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// TestDeleteApplication_RefusedWhileDeploying: while any environment has a
// deployment requested or running, deleting the application is refused
// with deployment_in_progress naming that deployment, and nothing is
// deleted or queued; once it has finished the deletion goes through.
func TestDeleteApplication_RefusedWhileDeploying(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	ctx, team := context.Background(), b.actor.TeamID
	staging := b.env(t, "staging")

	for _, state := range []store.DeploymentState{store.StateRequested, store.StateCapturing} {
		d, err := b.st.CreateDeployment(ctx, team, store.DeploymentParams{EnvironmentID: staging.ID, Revision: 1, Origin: store.OriginBuild, Actor: "user:test"})
		if err != nil {
			t.Fatal(err)
		}
		if state != store.StateRequested {
			if _, err := b.st.TransitionDeployment(ctx, team, d.ID, []store.DeploymentState{store.StateRequested}, state); err != nil {
				t.Fatal(err)
			}
		}
		q := &teardowns{}
		err = service.DeleteApplication(ctx, b.st, b.actor, q.enqueue, b.app.ID)
		wantCodes(t, err, "deployment_in_progress")
		if !strings.Contains(err.Error(), d.ID) || !strings.Contains(err.Error(), "staging") {
			t.Errorf("%s: the refusal does not name the deployment and environment: %v", state, err)
		}
		if _, err := b.st.GetApplication(ctx, team, b.app.ID); err != nil {
			t.Fatalf("%s: the application was deleted by a refused request: %v", state, err)
		}
		if len(q.queued) != 0 {
			t.Fatalf("%s: a refused deletion queued teardowns: %+v", state, q.queued)
		}
		if _, err := b.st.TransitionDeployment(ctx, team, d.ID, []store.DeploymentState{state}, store.StateCancelled); err != nil {
			t.Fatal(err)
		}
	}

	q := &teardowns{}
	if err := service.DeleteApplication(ctx, b.st, b.actor, q.enqueue, b.app.ID); err != nil {
		t.Fatalf("deleting once the deployments finished: %v", err)
	}
	if len(q.queued) == 0 {
		t.Fatal("no teardown queued")
	}
}
