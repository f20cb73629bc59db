package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestManifest_StarterForANewApplication: an application created with
// just a name opens on a starter manifest naming it, linked to the
// schema, which saves as it is; the empty state names this server.
func TestManifest_StarterForANewApplication(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)

	r := br.get("/applications")
	if got := testid(r, "apply-command").Text(); !strings.Contains(got, "SLIPWAY_URL=http://example.com\n") {
		t.Errorf("the empty state's snippet %q does not name this server", got)
	}
	r = br.post("/applications", url.Values{"name": {"blog"}})
	wantStatus(t, r, http.StatusSeeOther)
	r = br.get(r.header.Get("Location"))
	wantStatus(t, r, http.StatusOK)
	if msg := testid(r, "flash").Text(); !strings.Contains(msg, "Created application blog") {
		t.Errorf("flash %q", msg)
	}
	source := testid(r, "manifest-input").Text()
	if !strings.Contains(source, `name = "blog"`) || !strings.Contains(source, "#:schema http://example.com/manifest/schema.json") || testid(r, "starter-notice").Length() != 1 {
		t.Fatalf("the editor does not start from a starter naming blog:\n%s", source)
	}
	if href, _ := testid(r, "schema-link").Attr("href"); href != "/manifest/schema.json" {
		t.Errorf("schema link %q", href)
	}
	a, err := b.store.GetApplicationByName(context.Background(), owner.team.ID, "blog")
	if err != nil {
		t.Fatal(err)
	}
	r = br.post("/manifest", url.Values{"manifest": {source}, "application": {a.ID}, "expected_revision": {"0"}, "intent": {"save"}})
	wantStatus(t, r, http.StatusSeeOther)
	if a, _ = b.store.GetApplication(context.Background(), owner.team.ID, a.ID); a.CurrentRevision != 1 {
		t.Fatalf("the starter did not save: revision %d", a.CurrentRevision)
	}

	r = br.get("/applications?example=1")
	if !strings.Contains(testid(r, "manifest-input").Text(), `name = "my-app"`) {
		t.Errorf("?example=1 does not fill the create editor")
	}
	r = br.get("/manifest/schema.json")
	var schema map[string]any
	if err := json.Unmarshal([]byte(r.body), &schema); r.status != http.StatusOK || err != nil || schema["properties"] == nil {
		t.Fatalf("schema: status %d, %v", r.status, err)
	}
}
