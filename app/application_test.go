package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestApplication_CreateDelete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)

	tests := []struct {
		name, value, wantInMsg string
	}{
		{"uppercase", "Web", "lowercase"},
		{"empty", "", "lowercase"},
		{"too long", strings.Repeat("a", 64), "1–63"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := br.post("/applications", url.Values{"name": {tt.value}})
			wantStatus(t, r, http.StatusUnprocessableEntity)
			if msg := testid(r, "error-name").Text(); !strings.Contains(msg, tt.wantInMsg) {
				t.Fatalf("error %q, want it to mention %q", msg, tt.wantInMsg)
			}
		})
	}
	wantStatus(t, br.post("/applications", url.Values{"name": {"web"}}), http.StatusSeeOther)
	r := br.post("/applications", url.Values{"name": {"web"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(testid(r, "error-name").Text(), "already exists") {
		t.Fatalf("duplicate name error %q", testid(r, "error-name").Text())
	}

	r = br.get("/applications")
	id, _ := testid(r, "application-row").Attr("data-id")
	// The list guards deletion by the typed name, as Settings does: a
	// wrong or missing name deletes nothing and says so.
	for _, confirm := range []string{"", "wbe"} {
		r = br.post("/applications/"+id+"/delete", url.Values{"confirm": {confirm}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if msg := testid(r, "flash").Text(); !strings.Contains(msg, "confirmation_mismatch") || testid(r, "application-row").Length() != 1 {
			t.Fatalf("delete confirmed with %q: flash %q", confirm, msg)
		}
	}
	// htmx deletes swap in the refreshed list, and the flash out of band.
	req := newFormRequest("/applications/"+id+"/delete", url.Values{"_csrf": {br.csrf}, "confirm": {"web"}})
	req.Header.Set("HX-Request", "true")
	r = br.do(req)
	wantStatus(t, r, http.StatusOK)
	if testid(r, "application-list").Length() != 1 || testid(r, "applications-empty").Length() != 1 || strings.Contains(r.body, "<html") {
		t.Fatalf("htmx delete did not answer with the empty list fragment:\n%s", truncate(r.body))
	}
	if oob, _ := testid(r, "flash-region").Attr("hx-swap-oob"); oob != "true" || !strings.Contains(testid(r, "flash").Text(), "Deleted application web") {
		t.Fatalf("htmx delete has no flash out of band:\n%s", truncate(r.body))
	}
	// Deleting again is 404, like any object that does not exist.
	wantStatus(t, br.post("/applications/"+id+"/delete", url.Values{"confirm": {"web"}}), http.StatusNotFound)
}
