package app_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestTeamEvents_OlderPages: the audit log shows one page and an "Older
// events" row; htmx swaps that row for the next page's rows (and its own
// older row), until the oldest event, each event once; the actor filter
// holds across pages, and the link works as a plain page without script.
func TestTeamEvents_OlderPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	const n = 120
	for i := range n {
		actor := "system"
		if i%3 == 0 {
			actor = "token:tok" + fmt.Sprint(i%2)
		}
		if _, err := b.store.RecordEvent(ctx, owner.team.ID, store.EventParams{Actor: actor, Verb: "thing.happen", ObjectType: "member", Details: map[string]int{"i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	total, err := b.store.ListEvents(ctx, owner.team.ID, store.EventFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	list := eventList{row: "team-event-row", older: "team-events-older", filter: "team-event-filter"}
	details, pages := walkEvents(t, br, list, "/events")
	seen := map[string]bool{}
	for _, d := range details {
		seen[d] = true
	}
	if len(details) != len(total) || len(seen) != len(total) || pages != (len(total)+49)/50 {
		t.Fatalf("%d rows (%d distinct) in %d pages, want the %d events in %d pages", len(details), len(seen), pages, len(total), (len(total)+49)/50)
	}
	if details[0] != fmt.Sprint(total[0].ID) {
		t.Errorf("first row %q, want the newest event", details[0])
	}

	details, pages = walkEvents(t, br, list, "/events?actor=token:tok1")
	want := 0
	for _, e := range total {
		if e.Actor == "token:tok1" {
			want++
		}
	}
	if len(details) != want || pages != 1 {
		t.Errorf("actor filter: %d rows in %d pages, want %d in 1", len(details), pages, want)
	}
	r := br.get("/events?kind=member")
	next := list.olderURL(r.doc)
	u, err := url.Parse(next)
	if err != nil || u.Query().Get("kind") != "member" || u.Query().Get("before") == "" {
		t.Fatalf("older link %q drops the filter or the cursor", next)
	}
	if r := br.get(next); testid(r, "team-event-filter").Length() != 1 || testid(r, "team-event-row").Length() != 50 {
		t.Errorf("the older link without htmx is not a full page of 50 rows")
	}
}
