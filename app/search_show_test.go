package app_test

import (
	"context"
	"net/http"
	"testing"
)

// TestHeaderSearch: every page's header has the search form; an exact
// name opens the application, anything else lists the matches; another
// team's application is not found by name.
func TestHeaderSearch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	a, err := b.store.CreateApplication(context.Background(), owner.team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/applications", "/members", "/account", "/events", "/applications/" + a.ID} {
		r := br.get(path)
		if f := testid(r, "header-search"); f.AttrOr("action", "") != "/search" || f.AttrOr("method", "") != "get" || f.Find(`label[for="header-search-q"]`).Length() != 1 {
			t.Errorf("%s: no labelled header search", path)
		}
	}
	if r := br.get("/search?q=Notes"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/applications/"+a.ID {
		t.Fatalf("exact name: %d %q", r.status, r.header.Get("Location"))
	}
	if r := br.get("/search?q=not"); r.header.Get("Location") != "/applications?q=not" {
		t.Fatalf("partial name: %q", r.header.Get("Location"))
	}
	rival := b.signup(t, "rival@example.com", "Rival")
	if r := b.sessionBrowser(t, rival.user).get("/search?q=notes"); r.header.Get("Location") != "/applications?q=notes" {
		t.Fatalf("another team's name opened %q", r.header.Get("Location"))
	}
}
