package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestGettingStarted_TicksFromRealState: a new team's Applications page
// lists the first steps, none done; creating an application and a token
// ticks exactly those two; with every step done the list is gone.
func TestGettingStarted_TicksFromRealState(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	done := func() map[string]string {
		t.Helper()
		r := br.get("/applications")
		wantStatus(t, r, http.StatusOK)
		out := map[string]string{}
		for _, n := range testid(r, "checklist-item").Nodes {
			var step, state string
			for _, a := range n.Attr {
				switch a.Key {
				case "data-step":
					step = a.Val
				case "data-done":
					state = a.Val
				}
			}
			out[step] = state
		}
		return out
	}
	got := done()
	if len(got) != 6 {
		t.Fatalf("checklist %v, want six steps", got)
	}
	for step, d := range got {
		if d != "false" {
			t.Errorf("a new team has %s done", step)
		}
	}
	deployShop(t, b, br, owner.team.ID)
	wantStatus(t, br.post("/tokens", url.Values{"name": {"ci"}, "scopes": {"apps:read"}}), http.StatusCreated)
	got = done()
	for step, want := range map[string]string{"application": "true", "token": "true", "deploy": "false", "route": "false", "github": "false", "teammate": "false"} {
		if got[step] != want {
			t.Errorf("step %s done=%s, want %s", step, got[step], want)
		}
	}
	// The rest, straight in the store, as the worker, GitHub and an
	// invitation would leave it.
	ctx := context.Background()
	ds, _ := b.store.ListDeployments(ctx, owner.team.ID, store.DeploymentFilter{})
	succeed(t, b, owner.team.ID, ds[0], `{"metadata":{"name":"shop"},"spec":{"services":[{"name":"web","source":{"type":"image","image":"registry.example/shop:1"}}]}}`)
	if _, err := b.store.Tx().Exec(ctx, `INSERT INTO deployed_routes (team_id, application_id, environment_id, deployment_id, hostname, visibility, service, backend_service, backend_port)
		VALUES ($1, $2, $3, $4, 'shop.example.com', 'public', 'web', 'slw-x-web', 8080)`, owner.team.ID, ds[0].ApplicationID, ds[0].EnvironmentID, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.UpsertGitHubInstallation(ctx, 42, "acme", "Organization"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.BindGitHubInstallation(ctx, owner.team.ID, 42, owner.user.ID); err != nil {
		t.Fatal(err)
	}
	b.addMember(t, owner.team, "dev@example.com", store.RoleDeveloper)
	if got := done(); len(got) != 0 {
		t.Fatalf("with every step done the checklist still shows %v", got)
	}
}
