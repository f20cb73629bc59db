package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestPages_Viewer renders every team page as a viewer and checks that no
// control the viewer cannot use is offered.
func TestPages_Viewer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	if _, err := b.store.CreateApplication(context.Background(), owner.team.ID, "web"); err != nil {
		t.Fatal(err)
	}
	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	br := b.sessionBrowser(t, viewer)
	forbidden := []string{"application-create-form", "application-delete-open", "invite-form", "member-role-form", "member-remove", "token-create-form", "token-revoke"}
	for _, path := range []string{"/applications", "/members", "/tokens", "/account", "/events"} {
		r := br.get(path)
		wantStatus(t, r, http.StatusOK)
		if testid(r, "topbar").Length() != 1 {
			t.Fatalf("%s: not rendered in the app layout", path)
		}
		for _, id := range forbidden {
			if testid(r, id).Length() != 0 {
				t.Errorf("%s offers %s to a viewer", path, id)
			}
		}
	}
	r := br.get("/applications")
	if testid(r, "application-row").Length() != 1 {
		t.Fatal("viewer does not see the application")
	}
}

// TestPages_OwnerControls checks the pages an owner sees carry the
// controls (the counterpart of TestPages_Viewer, so that test cannot pass
// because the page lost its controls for everyone).
func TestPages_OwnerControls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	if _, err := b.store.CreateApplication(context.Background(), owner.team.ID, "web"); err != nil {
		t.Fatal(err)
	}
	b.addMember(t, owner.team, "dev@example.com", store.RoleDeveloper)
	br := b.sessionBrowser(t, owner.user)
	want := map[string][]string{
		"/applications": {"application-create-form", "application-delete-open", "application-row"},
		"/members":      {"invite-form", "member-role-form", "member-remove"},
		"/tokens":       {"token-create-form"},
		"/account":      {"team-create-form", "account-email"},
		"/events":       {"team-event-filter", "team-event-row"},
	}
	for path, ids := range want {
		r := br.get(path)
		wantStatus(t, r, http.StatusOK)
		for _, id := range ids {
			if testid(r, id).Length() == 0 {
				t.Errorf("%s lacks %s", path, id)
			}
		}
		if got, _ := testid(r, "nav-"+strings.TrimPrefix(path, "/")).Attr("aria-current"); got != "page" {
			t.Errorf("%s: nav item not marked current", path)
		}
	}
}

func TestRender_HTMXFragment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	req := httptest.NewRequest(http.MethodGet, "/applications", nil)
	req.Header.Set("HX-Request", "true")
	r := br.do(req)
	wantStatus(t, r, http.StatusOK)
	if strings.Contains(r.body, "<html") || testid(r, "topbar").Length() != 0 {
		t.Fatal("htmx request got the whole page")
	}
	if testid(r, "application-list").Length() != 1 {
		t.Fatal("fragment lacks the application list")
	}
}
