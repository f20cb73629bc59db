package secrets_test

import (
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestService_AuditLog: setting, granting and deleting a stored secret
// each leave an audit event naming the secret and its application, with
// the actor, and never the value.
func TestService_AuditLog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const value = "hunter2-value-never-logged"
	_, err := b.svc.Set(b.ctx, b.team, b.app.ID, "db-password", []byte(value), "user:alice")
	must(t, err)
	_, err = b.svc.SetAccess(b.ctx, b.team, b.app.ID, "db-password", store.SecretAccess{EnvironmentIDs: []string{b.staging.ID}}, "token:ci")
	must(t, err)
	must(t, b.svc.Delete(b.ctx, b.team, b.app.ID, "db-password", "user:bob"))

	events, err := b.st.ListEvents(b.ctx, b.team, store.EventFilter{ApplicationID: b.app.ID})
	must(t, err)
	var got []string
	for _, e := range events {
		if strings.Contains(string(e.Details), value) {
			t.Fatalf("event %s carries the secret's value: %s", e.Verb, e.Details)
		}
		if !strings.Contains(string(e.Details), `"name": "db-password"`) {
			t.Errorf("event %s does not name the secret: %s", e.Verb, e.Details)
		}
		got = append(got, e.Actor+" "+e.Verb)
	}
	if want := "user:bob secret.delete|token:ci secret.access|user:alice secret.set"; strings.Join(got, "|") != want {
		t.Fatalf("audit log %q, want %q", strings.Join(got, "|"), want)
	}
	// A refused change records nothing.
	if _, err := b.svc.Set(b.ctx, b.team, b.app.ID, "db-password", nil, "user:alice"); err == nil {
		t.Fatal("an empty value was stored")
	}
	after, err := b.st.ListEvents(b.ctx, b.team, store.EventFilter{ApplicationID: b.app.ID})
	must(t, err)
	if len(after) != len(events) {
		t.Fatalf("a refused set recorded %d events", len(after)-len(events))
	}
}
