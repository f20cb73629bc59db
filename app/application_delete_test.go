package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestApplication_DeleteRefusedWhileDeploying: the dashboard refuses to
// delete an application with a deployment requested or running, naming
// it and the code, and keeps the application.
func TestApplication_DeleteRefusedWhileDeploying(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	ctx := context.Background()

	wantStatus(t, br.post("/applications", url.Values{"name": {"web"}}), http.StatusSeeOther)
	a, err := b.store.GetApplicationByName(ctx, owner.team.ID, "web")
	if err != nil {
		t.Fatal(err)
	}
	env, err := b.store.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{ApplicationID: a.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.store.CreateDeployment(ctx, owner.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "user:test"})
	if err != nil {
		t.Fatal(err)
	}

	r := br.post("/applications/"+a.ID+"/delete", nil)
	wantStatus(t, r, http.StatusConflict)
	if msg := testid(r, "error-message").Text(); !strings.Contains(msg, d.ID) || !strings.Contains(msg, "deployment_in_progress") {
		t.Fatalf("refusal %q does not name the deployment and the code", msg)
	}
	if _, err := b.store.GetApplication(ctx, owner.team.ID, a.ID); err != nil {
		t.Fatalf("the application was deleted: %v", err)
	}
	// The deletion once the deployment has finished is
	// app/service TestDeleteApplication_RefusedWhileDeploying (this server
	// has no job queue to take the teardowns).
}
