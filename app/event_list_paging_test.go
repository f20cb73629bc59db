package app_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/slipwayhq/slipway/store"
)

// TestApplicationEvents_OlderPages: the Events tab shows one page and an
// "Older events" row, as the team's audit log does; htmx swaps it for the
// next page's rows until the oldest event of the application, each once
// and no other application's; the verb filter holds across pages and
// offers every verb of the application, those of older pages included.
func TestApplicationEvents_OlderPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	team := owner.team.ID
	notes, err := b.store.CreateApplication(ctx, team, "notes")
	if err != nil {
		t.Fatal(err)
	}
	blog, err := b.store.CreateApplication(ctx, team, "blog")
	if err != nil {
		t.Fatal(err)
	}
	record := func(appID, verb string, i int) {
		t.Helper()
		if _, err := b.store.RecordEvent(ctx, team, store.EventParams{Actor: "system", Verb: verb, ObjectType: "application", ObjectID: appID, Details: map[string]int{"i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	record(notes.ID, "rare.thing", -1) // the oldest: on the last page only
	const n = 120
	for i := range n {
		verb := "thing.happen"
		if i%4 == 0 {
			verb = "other.thing"
		}
		record(notes.ID, verb, i)
		record(blog.ID, "blog.thing", i)
	}
	all, err := b.store.ListEvents(ctx, team, store.EventFilter{ApplicationID: notes.ID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	list := eventList{row: "event-row", older: "events-older", filter: "event-filter"}
	path := "/applications/" + notes.ID + "/events"
	details, pages := walkEvents(t, br, list, path)
	seen := map[string]bool{}
	for _, d := range details {
		seen[d] = true
	}
	if len(details) != len(all) || len(seen) != len(all) || pages != (len(all)+49)/50 {
		t.Fatalf("%d rows (%d distinct) in %d pages, want the application's %d events in %d pages", len(details), len(seen), pages, len(all), (len(all)+49)/50)
	}
	if want := fmt.Sprint(all[0].ID); details[0] != want {
		t.Errorf("first row %q, want the newest event %q", details[0], want)
	}

	details, pages = walkEvents(t, br, list, path+"?verb=other.thing")
	if len(details) != n/4 || pages != 1 {
		t.Errorf("verb filter: %d rows in %d pages, want %d in 1", len(details), pages, n/4)
	}
	r := br.get(path + "?verb=thing.happen")
	next := list.olderURL(r.doc)
	u, err := url.Parse(next)
	if err != nil || u.Query().Get("verb") != "thing.happen" || u.Query().Get("before") == "" {
		t.Fatalf("older link %q drops the verb or the cursor", next)
	}
	if r := br.get(next); testid(r, "event-filter").Length() != 1 || testid(r, "event-row").Length() != n*3/4-50 {
		t.Errorf("the older link without htmx is not a full page of the %d older thing.happen events", n*3/4-50)
	}
	options := r.doc.Find(`#event-verb option`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") })
	if strings.Join(options, " ") != " other.thing rare.thing thing.happen" {
		t.Errorf("verb choices %q, want every verb of the application's events", options)
	}
}
