package store_test

import (
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestStore_ListEventsSummary: a summary lists a requested deployment once
// (its request), a deployment nobody requested (a rollback) by its
// outcome, and an event that names the application in its details (a
// stored secret's) under that application.
func TestStore_ListEventsSummary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	team := b.a.team.ID
	asked, err := b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{EnvironmentID: b.a.env.ID, Origin: store.OriginBuild, Actor: "user:" + b.a.owner.ID})
	must(t, err)
	rollback, err := b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{EnvironmentID: b.a.env.ID, Origin: store.OriginRollback, Actor: "rollback:" + asked.ID})
	must(t, err)
	record := func(verb, typ, id string, details any) {
		t.Helper()
		_, err := b.st.RecordEvent(b.ctx, team, store.EventParams{Actor: "worker", Verb: verb, ObjectType: typ, ObjectID: id, Details: details})
		must(t, err)
	}
	record("deployment.request", "deployment", asked.ID, nil)
	for _, v := range []string{"capturing", "preparing", "running_jobs", "rolling_out", "failed"} {
		record("deployment."+v, "deployment", asked.ID, nil)
	}
	for _, v := range []string{"capturing", "preparing", "rolling_out", "succeeded"} {
		record("deployment."+v, "deployment", rollback.ID, nil)
	}
	record("secret.set", "secret", "sec_x", map[string]any{"application_id": b.a.app.ID, "name": "db"})
	_, err = b.st.RecordEvent(b.ctx, b.b.team.ID, store.EventParams{Actor: "x", Verb: "secret.set", ObjectType: "secret", ObjectID: "sec_y", Details: map[string]any{"application_id": b.a.app.ID}})
	must(t, err)

	verbs := func(f store.EventFilter) string {
		t.Helper()
		es, err := b.st.ListEvents(b.ctx, team, f)
		must(t, err)
		var out []string
		for _, e := range es {
			out = append(out, e.Verb)
		}
		return strings.Join(out, " ")
	}
	if got := verbs(store.EventFilter{Summary: true}); got != "secret.set deployment.succeeded deployment.request" {
		t.Errorf("summary %q, want the secret, the rollback's outcome and the request", got)
	}
	if got := verbs(store.EventFilter{}); strings.Count(got, "deployment.") != 10 {
		t.Errorf("the full log %q lost events", got)
	}
	if got := verbs(store.EventFilter{ApplicationID: b.a.app.ID, Summary: true}); got != "secret.set deployment.succeeded deployment.request" {
		t.Errorf("the application's summary %q, want its secret's event too and no other team's", got)
	}
}
