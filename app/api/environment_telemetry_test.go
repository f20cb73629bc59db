package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestEnvironmentTelemetry_Grant(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	receiver := strings.Replace(twoServices, `name = "db"`, "name = \"db\"\nreceives_telemetry = true", 1)
	want(t, b.apply(t, receiver, ""), http.StatusCreated, "")
	path := "/api/v1/applications/shop/environments/staging/telemetry"

	// The viewer's token lacks telemetry:grant.
	want(t, b.do(t, b.viewer, http.MethodPut, path, "application/json", []byte(`{"granted":true}`)), http.StatusForbidden, "permission_denied")
	r := b.do(t, b.owner, http.MethodPut, path, "application/json", []byte(`{"granted":true}`))
	want(t, r, http.StatusOK, "")
	if r.body["granted"] != true || r.body["receiver"] != "db" || len(r.body["warnings"].([]any)) != 0 {
		t.Fatalf("grant = %s", r.raw)
	}
	env, err := b.st.GetEnvironmentByName(context.Background(), b.team.ID, appID(t, b, "shop"), "staging")
	if err != nil {
		t.Fatal(err)
	}
	if granted, err := b.st.EnvironmentTelemetryGranted(context.Background(), b.team.ID, env.ID); err != nil || !granted {
		t.Fatalf("stored grant %v, %v", granted, err)
	}
	b.jobs.mu.Lock()
	kinds := b.jobs.kinds
	b.jobs.mu.Unlock()
	if len(kinds) != 1 || kinds[0] != "reconcile" || len(b.jobs.queued()) != 0 {
		t.Fatalf("a grant queued %v and %d deployments, want one reconcile", kinds, len(b.jobs.queued()))
	}
	r = b.do(t, b.owner, http.MethodPut, path, "application/json", []byte(`{"granted":false}`))
	want(t, r, http.StatusOK, "")
	if w := r.body["warnings"].([]any); len(w) != 1 || w[0].(map[string]any)["code"] != "telemetry_not_granted" {
		t.Fatalf("revoke = %s", r.raw)
	}
	want(t, b.do(t, b.owner, http.MethodPut, "/api/v1/applications/shop/environments/nowhere/telemetry", "application/json", []byte(`{"granted":true}`)), http.StatusNotFound, "")
}

func appID(t *testing.T, b *deployBundle, name string) string {
	t.Helper()
	a, err := b.st.GetApplicationByName(context.Background(), b.team.ID, name)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}
