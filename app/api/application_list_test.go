package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// TestApplicationList_PagesWithCursor: GET /applications lists every
// application by name; with limit it pages by the next_after cursor, each
// application once, a bad limit refused naming the field; another team's
// token never sees this team's applications.
func TestApplicationList_PagesWithCursor(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	ctx := context.Background()
	var names []string
	for i := 7; i >= 0; i-- {
		a, err := b.st.CreateApplication(ctx, b.team.ID, fmt.Sprintf("app-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		names = append([]string{a.Name}, names...)
	}
	list := func(secret, query string) api.ApplicationList {
		t.Helper()
		r := b.do(t, secret, http.MethodGet, "/api/v1/applications"+query, "", nil)
		want(t, r, http.StatusOK, "")
		var l api.ApplicationList
		mustDecode(t, r, &l)
		return l
	}
	namesOf := func(l api.ApplicationList) (out []string) {
		for _, a := range l.Applications {
			out = append(out, a.Name)
		}
		return out
	}
	walk := func(secret, limit string) (all []string, pages int) {
		t.Helper()
		query := "?limit=" + limit
		for pages < 20 {
			l := list(secret, query)
			pages++
			all = append(all, namesOf(l)...)
			if l.NextAfter == "" {
				break
			}
			query = "?limit=" + limit + "&after=" + url.QueryEscape(l.NextAfter)
		}
		return all, pages
	}

	if l := list(b.viewer, ""); !slices.Equal(namesOf(l), names) || l.NextAfter != "" {
		t.Errorf("without limit: %v next %q, want all of %v", namesOf(l), l.NextAfter, names)
	}
	for limit, pages := range map[string]int{"3": 3, "4": 2, "8": 1, "500": 1} {
		if got, n := walk(b.viewer, limit); !slices.Equal(got, names) || n != pages {
			t.Errorf("limit=%s: %v in %d pages, want %v in %d", limit, got, n, names, pages)
		}
	}
	if l := list(b.viewer, "?limit=2&after=app-6"); !slices.Equal(namesOf(l), []string{"app-7"}) || l.NextAfter != "" {
		t.Errorf("after app-6: %v next %q, want app-7 and no next", namesOf(l), l.NextAfter)
	}
	for _, q := range []string{"limit=0", "limit=501", "limit=x", "after=app-1"} {
		want(t, b.do(t, b.viewer, http.MethodGet, "/api/v1/applications?"+q, "", nil), http.StatusBadRequest, "limit_invalid")
	}

	secret := rivalToken(t, b)
	if got, _ := walk(secret, "2"); len(got) != 0 {
		t.Errorf("another team's token lists %v", got)
	}
	if l := list(secret, ""); len(l.Applications) != 0 {
		t.Errorf("another team's token lists %v", namesOf(l))
	}
}

// rivalToken signs up another team, Rivals, and returns an all-scope API
// token of it: a caller that must see none of b's team.
func rivalToken(t *testing.T, b *deployBundle) string {
	t.Helper()
	ctx := context.Background()
	u, rival, err := service.Signup(ctx, b.st, auth.TestArgon2, service.SignupRequest{Email: "rival@example.com", Password: "correct horse battery", TeamName: "Rivals"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := service.CreateToken(ctx, b.st, service.Actor{TeamID: rival.ID, UserID: u.ID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "rival", Scopes: auth.Strings(auth.AllScopes)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return secret
}
