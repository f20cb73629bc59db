package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestTeamEvents_FilterByApplicationAndKind: the team's audit log lists
// events of every application, and narrows to one application (including
// its environments' and deployments' events) or one kind of object.
func TestTeamEvents_FilterByApplicationAndKind(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	wantStatus(t, br.post("/manifest", url.Values{"manifest": {shopManifest("1")}, "intent": {"save"}}), http.StatusSeeOther)
	shop, err := b.store.GetApplicationByName(ctx, owner.team.ID, "shop")
	if err != nil {
		t.Fatal(err)
	}
	blog, err := b.store.CreateApplication(ctx, owner.team.ID, "blog")
	if err != nil {
		t.Fatal(err)
	}
	prod, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, shop.ID, "production")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []store.EventParams{
		{Actor: "user:" + owner.user.ID, Verb: "application.create", ObjectType: "application", ObjectID: blog.ID},
		{Actor: "system", Verb: "environment.sync", ObjectType: "environment", ObjectID: prod.ID},
	} {
		if _, err := b.store.RecordEvent(ctx, owner.team.ID, e); err != nil {
			t.Fatal(err)
		}
	}
	count := func(r response, attr, value string) int {
		return r.doc.Find(`[data-testid="team-event-row"][` + attr + `="` + value + `"]`).Length()
	}
	r := br.get("/events")
	wantStatus(t, r, http.StatusOK)
	if cur, _ := testid(r, "nav-events").Attr("aria-current"); cur != "page" {
		t.Error("the nav does not mark the audit log current")
	}
	if count(r, "data-verb", "environment.sync") != 1 || count(r, "data-verb", "application.create") == 0 {
		t.Fatalf("unfiltered log: %q", testid(r, "team-event-list").Text())
	}
	r = br.get("/events?application=" + shop.ID)
	if count(r, "data-verb", "environment.sync") != 1 {
		t.Error("the shop filter drops its environment's event")
	}
	if r.doc.Find(`[data-testid="team-event-row"]:contains("blog")`).Length() != 0 {
		t.Error("the shop filter shows blog's events")
	}
	r = br.get("/events?kind=environment")
	if n := testid(r, "team-event-row").Length(); n != count(r, "data-kind", "environment") || n == 0 {
		t.Errorf("kind filter: %d rows, %d of kind environment", n, count(r, "data-kind", "environment"))
	}
	r = br.get("/events?kind=token")
	if testid(r, "team-events-empty").Length() != 1 {
		t.Error("no empty state when nothing matches")
	}
	other := b.signup(t, "other@example.com", "Rival")
	rb := b.sessionBrowser(t, other.user)
	if r := rb.get("/events?application=" + shop.ID); r.status != http.StatusNotFound {
		t.Errorf("another team filtering by shop: status %d", r.status)
	}
	if r := rb.get("/events"); count(r, "data-verb", "environment.sync") != 0 {
		t.Error("another team sees Acme's events")
	}
}
