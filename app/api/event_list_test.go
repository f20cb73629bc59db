package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/store"
)

// TestEventList_PagesWithCursor walks GET /events with limit and the
// next_before cursor: every event once, newest first, filters by
// application name and actor, bad parameters refused naming the field,
// and another team's token sees none of it.
func TestEventList_PagesWithCursor(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	ctx := context.Background()
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")
	a, err := b.st.GetApplicationByName(ctx, b.team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	blog, err := b.st.CreateApplication(ctx, b.team.ID, "blog")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		for _, id := range []string{a.ID, blog.ID} {
			if _, err := b.st.RecordEvent(ctx, b.team.ID, store.EventParams{Actor: fmt.Sprintf("token:t%d", i%2), Verb: "thing.happen", ObjectType: "application", ObjectID: id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := b.st.ListEvents(ctx, b.team.ID, store.EventFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	walk := func(secret, query string) (ids []int64, pages int) {
		t.Helper()
		path := "/api/v1/events?" + query
		for {
			r := b.do(t, secret, http.MethodGet, path, "", nil)
			want(t, r, http.StatusOK, "")
			var page api.AuditEventList
			mustDecode(t, r, &page)
			pages++
			for _, e := range page.Events {
				ids = append(ids, e.ID)
			}
			if page.NextBefore == 0 || pages > 30 {
				return ids, pages
			}
			path = fmt.Sprintf("/api/v1/events?%s&before=%d", query, page.NextBefore)
		}
	}
	var allIDs, notesIDs, t1IDs []int64
	for _, e := range all {
		allIDs = append(allIDs, e.ID)
		if e.ObjectID == a.ID || e.ObjectType != "application" {
			notesIDs = append(notesIDs, e.ID)
		}
		if e.Actor == "token:t1" {
			t1IDs = append(t1IDs, e.ID)
		}
	}
	if len(allIDs) < 10 {
		t.Fatalf("only %d events recorded", len(allIDs))
	}
	if ids, pages := walk(b.viewer, "limit=3"); !slices.Equal(ids, allIDs) || pages != (len(allIDs)+2)/3 {
		t.Errorf("limit=3: %v in %d pages, want %v", ids, pages, allIDs)
	}
	if ids, _ := walk(b.viewer, "limit=2&actor=token:t1"); !slices.Equal(ids, t1IDs) || len(ids) != 4 {
		t.Errorf("actor filter: %v, want %v", ids, t1IDs)
	}
	ids, _ := walk(b.viewer, "limit=4&application=blog")
	if len(ids) != 5 || slices.ContainsFunc(ids, func(id int64) bool { return slices.Contains(notesIDs, id) }) {
		t.Errorf("application=blog: %v (notes' events are %v)", ids, notesIDs)
	}
	for _, tt := range []struct{ query, code string }{
		{"limit=0", "limit_invalid"}, {"limit=501", "limit_invalid"}, {"limit=x", "limit_invalid"}, {"before=-1", "before_invalid"},
	} {
		want(t, b.do(t, b.viewer, http.MethodGet, "/api/v1/events?"+tt.query, "", nil), http.StatusBadRequest, tt.code)
	}

	secret := rivalToken(t, b)
	if ids, _ := walk(secret, "limit=500"); slices.ContainsFunc(ids, func(id int64) bool { return slices.Contains(allIDs, id) }) {
		t.Errorf("another team's token sees this team's events: %v", ids)
	}
	want(t, b.do(t, secret, http.MethodGet, "/api/v1/events?application="+a.ID, "", nil), http.StatusNotFound, "not_found")
}
