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
	// htmx deletes swap in the refreshed list.
	req := newFormRequest("/applications/"+id+"/delete", url.Values{"_csrf": {br.csrf}})
	req.Header.Set("HX-Request", "true")
	r = br.do(req)
	wantStatus(t, r, http.StatusOK)
	if testid(r, "application-list").Length() != 1 || testid(r, "applications-empty").Length() != 1 || strings.Contains(r.body, "<html") {
		t.Fatalf("htmx delete did not answer with the empty list fragment:\n%s", truncate(r.body))
	}
	// Deleting again is 404, like any object that does not exist.
	wantStatus(t, br.post("/applications/"+id+"/delete", nil), http.StatusNotFound)
}
