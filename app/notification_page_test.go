package app_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store"
)

// TestNotifications_API: destinations are created, listed, tested and
// refused through the API; credentials are write-only; managing them
// needs notifications:manage.
func TestNotifications_API(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	_, secret := b.token(t, owner.team, owner.user, auth.RoleOwner, auth.AllScopes...)
	_, reader := b.token(t, owner.team, owner.user, auth.RoleOwner, auth.AppsRead)

	r := b.api(t, secret, "POST", "/api/v1/notifications/destinations", map[string]any{
		"name": "hook", "kind": "webhook", "url": "https://hooks.example.com/in/credential-part", "events": []string{"deployment.failed", "service.unhealthy"},
	})
	if r.status != 201 || r.body["secret"] == "" || r.body["host"] != "hooks.example.com" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	id := r.body["id"].(string)
	generated := r.body["secret"].(string)

	for _, path := range []string{"/api/v1/notifications/destinations", "/api/v1/notifications/destinations/" + id} {
		got := b.api(t, reader, "GET", path, nil)
		if got.status != 200 || strings.Contains(got.raw, "credential-part") || strings.Contains(got.raw, generated) {
			t.Fatalf("GET %s: %d %s", path, got.status, got.raw)
		}
	}
	if got := b.api(t, reader, "POST", "/api/v1/notifications/destinations/"+id+"/test", nil); got.status != 403 {
		t.Fatalf("test with apps:read only: %d %s", got.status, got.raw)
	}
	got := b.api(t, secret, "POST", "/api/v1/notifications/destinations/"+id+"/test", nil)
	if got.status != 202 || got.body["status"] != "pending" || got.body["event"] != "test" {
		t.Fatalf("send test: %d %s", got.status, got.raw)
	}
	if got := b.api(t, secret, "GET", "/api/v1/notifications/destinations/"+id+"/deliveries", nil); !strings.Contains(got.raw, `"event":"test"`) {
		t.Fatalf("deliveries: %s", got.raw)
	}

	bad := b.api(t, secret, "POST", "/api/v1/notifications/destinations", map[string]any{"name": "mail", "kind": "email", "from": "nope"})
	if bad.status != 422 || bad.body["code"] != "address_invalid" {
		t.Fatalf("invalid e-mail destination: %d %s", bad.status, bad.raw)
	}
	details := bad.body["details"].(map[string]any)
	if details["field"] != "from" || len(details["errors"].([]any)) != 3 {
		t.Fatalf("details %v: want from first and three errors (from, smtp_host, to)", details)
	}
	upd := b.api(t, secret, "PATCH", "/api/v1/notifications/destinations/"+id, map[string]any{"enabled": false})
	if upd.status != 200 || upd.body["enabled"] != false || upd.body["host"] != "hooks.example.com" {
		t.Fatalf("patch: %d %s", upd.status, upd.raw)
	}
	if del := b.api(t, secret, "DELETE", "/api/v1/notifications/destinations/"+id, nil); del.status != 204 {
		t.Fatalf("delete: %d %s", del.status, del.raw)
	}
}

// TestNotifications_Page: the page adds a destination from its form,
// lists it without its URL, marks it failing after three failed
// attempts, and queues a test from its button.
func TestNotifications_Page(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)

	r := br.post("/notifications", url.Values{"name": {"ops"}, "kind": {"slack"}, "url": {"https://hooks.slack.example/services/T/B/secretpart"},
		"events": {"deployment.failed", "preview.failed"}})
	if r.status != 303 {
		t.Fatalf("create: %d %s", r.status, truncate(r.body))
	}
	page := br.get("/notifications")
	if page.status != 200 || strings.Contains(page.body, "secretpart") {
		t.Fatalf("page: %d, shows the URL: %v", page.status, strings.Contains(page.body, "secretpart"))
	}
	dest := page.doc.Find(`[data-testid="destination"]`)
	if dest.Length() != 1 || dest.AttrOr("data-name", "") != "ops" || dest.Find(`[data-testid="destination-state"]`).Text() != "ok" {
		t.Fatalf("destination row: %s", truncate(page.body))
	}
	if n := dest.Find(`[data-testid="destination-event"]`).Length(); n != 2 {
		t.Fatalf("%d events shown, want 2", n)
	}
	id := dest.AttrOr("data-id", "")

	// Three failed attempts mark it failing.
	ctx := context.Background()
	for i := range 3 {
		dl, _, err := b.store.CreateNotificationDelivery(ctx, owner.team.ID, id, "deployment.failed", "k"+string(rune('a'+i)), []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.RecordDeliveryAttempt(ctx, owner.team.ID, dl.ID, store.DeliveryOutcome{Err: "POST to hooks.slack.example answered 500", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	page = br.get("/notifications")
	if s := page.doc.Find(`[data-testid="destination-state"]`).Text(); s != "failing" {
		t.Fatalf("state %q after three failures, want failing", s)
	}

	if r := br.post("/notifications/"+id+"/test", nil); r.status != 303 {
		t.Fatalf("send test: %d", r.status)
	}
	page = br.get("/notifications?notice=test")
	if page.doc.Find(`[data-testid="delivery"][data-event="test"][data-status="pending"]`).Length() != 1 {
		t.Fatalf("no pending test delivery: %s", truncate(page.body))
	}
	if page.doc.Find(`[data-testid="deliveries"][hx-trigger="every 2s"]`).Length() != 1 {
		t.Fatal("a pending delivery's list does not reload itself")
	}

	bad := br.post("/notifications", url.Values{"name": {""}, "kind": {"webhook"}, "url": {"ftp://x"}})
	if bad.status != 422 || !strings.Contains(bad.body, "give the destination a name") || !strings.Contains(bad.body, "absolute https://") {
		t.Fatalf("refused form: %d %s", bad.status, truncate(bad.body))
	}
}
