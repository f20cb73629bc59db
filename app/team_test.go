package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func TestTeam_CreateAndSwitch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)

	r := br.post("/teams", url.Values{"team": {""}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if testid(r, "error-team").Length() != 1 {
		t.Fatal("no error on the team field")
	}
	wantStatus(t, br.post("/teams", url.Values{"team": {"Side project"}}), http.StatusSeeOther)
	r = br.get("/applications")
	if got := testid(r, "current-team").Text(); got != "Side project" {
		t.Fatalf("after creating, current team %q", got)
	}
	wantStatus(t, br.post("/teams/"+owner.team.ID+"/switch", nil), http.StatusSeeOther)
	r = br.get("/applications")
	if got := testid(r, "current-team").Text(); got != "Acme" {
		t.Fatalf("after switching, current team %q", got)
	}

	r = br.post("/teams/team_unknown/switch", nil)
	wantStatus(t, r, http.StatusNotFound)
	if code, _ := testid(r, "error-message").Attr("data-code"); code != "not_found" {
		t.Fatalf("unknown team: code %q", code)
	}

	// Removed from the current team: the session falls back to another.
	other := b.signup(t, "other@example.com", "Other")
	if err := b.store.AddMember(context.Background(), other.team.ID, owner.user.ID, store.RoleViewer); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, br.post("/teams/"+other.team.ID+"/switch", nil), http.StatusSeeOther)
	if err := b.store.RemoveMember(context.Background(), other.team.ID, owner.user.ID); err != nil {
		t.Fatal(err)
	}
	r = br.get("/applications")
	wantStatus(t, r, http.StatusOK)
	if got := testid(r, "current-team").Text(); got == "Other" {
		t.Fatal("still in a team the user was removed from")
	}
}
