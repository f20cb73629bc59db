package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestApplicationList_Search filters by a case-insensitive name substring
// in the store query: LIKE wildcards in the query are literal, another
// team's applications never appear, and the htmx request gets only the
// list. The last deployment shows its short commit.
func TestApplicationList_Search(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	owner := b.signup(t, "owner@example.com", "Acme")
	other := b.signup(t, "other@example.com", "Other")
	br := b.sessionBrowser(t, owner.user)

	apps := map[string]store.Application{}
	for _, name := range []string{"web-api", "webshop", "billing"} {
		a, err := b.store.CreateApplication(ctx, owner.team.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		apps[name] = a
	}
	if _, err := b.store.CreateApplication(ctx, other.team.ID, "web-other"); err != nil {
		t.Fatal(err)
	}
	env, err := b.store.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{ApplicationID: apps["web-api"].ID, Kind: store.KindEnvironment, Name: "production", Slug: "production"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.store.CreateDeployment(ctx, owner.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "user:" + owner.user.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.SetDeploymentRef(ctx, owner.team.ID, d.ID, store.GitRef{Commit: "0123456789abcdef0123456789abcdef01234567"}); err != nil {
		t.Fatal(err)
	}

	names := func(r response) []string {
		var out []string
		for _, n := range testid(r, "application-link").Nodes {
			out = append(out, strings.TrimSpace(n.FirstChild.Data))
		}
		return out
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"billing", "web-api", "webshop"}},
		{"WEB", []string{"web-api", "webshop"}},
		{"shop", []string{"webshop"}},
		{"other", nil}, // only in the other team
		{"%", nil},     // a literal percent, not "anything"
		{"b_a", nil},   // a literal underscore: would match "b-a" in web-api
		{`b\-a`, nil},  // a literal backslash
		{"  bill ", []string{"billing"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := br.get("/applications?q=" + url.QueryEscape(tt.query))
			wantStatus(t, r, http.StatusOK)
			if got := names(r); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("q=%q listed %v, want %v", tt.query, got, tt.want)
			}
			if v, _ := testid(r, "application-search").Attr("value"); v != strings.TrimSpace(tt.query) {
				t.Fatalf("search box holds %q, want the query %q", v, tt.query)
			}
			if len(tt.want) == 0 && testid(r, "applications-no-match").Length() != 1 {
				t.Fatalf("q=%q: no 'no match' state:\n%s", tt.query, truncate(r.body))
			}
		})
	}

	// The state filter keeps applications with an environment in that
	// state (web-api's only deployment is still requested); an unknown
	// state filters nothing.
	for q, want := range map[string]string{
		"state=deploying": "web-api", "state=failed": "", "state=bogus": "billing,web-api,webshop",
		"q=web&state=deploying": "web-api", "q=shop&state=deploying": "",
	} {
		r := br.get("/applications?" + q)
		wantStatus(t, r, http.StatusOK)
		if got := strings.Join(names(r), ","); got != want {
			t.Errorf("%s listed %q, want %q", q, got, want)
		}
	}
	if v, _ := br.get("/applications?state=failed").doc.Find(`[data-testid="application-state-filter"] option[selected]`).Attr("value"); v != "failed" {
		t.Errorf("state filter shows %q selected, want failed", v)
	}

	// The search box's htmx request swaps in only the list.
	req := httptest.NewRequest(http.MethodGet, "/applications?q=shop", nil)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Target", "application-list")
	r := br.do(req)
	wantStatus(t, r, http.StatusOK)
	if strings.Contains(r.body, "<html") || testid(r, "application-search").Length() != 0 {
		t.Fatalf("htmx search did not answer with the list fragment:\n%s", truncate(r.body))
	}
	if got := names(r); strings.Join(got, ",") != "webshop" {
		t.Fatalf("htmx search listed %v", got)
	}

	// The last deployment's short commit, only where it read one.
	r = br.get("/applications")
	row := r.doc.Find(`[data-testid="application-row"][data-id="` + apps["web-api"].ID + `"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid="application-last-commit"]`).Text()); got != "0123456" {
		t.Fatalf("web-api last commit %q, want 0123456", got)
	}
	if n := testid(r, "application-last-commit").Length(); n != 1 {
		t.Fatalf("%d commits shown, want only web-api's", n)
	}
}
