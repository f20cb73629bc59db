package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/partial"
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

// TestApplicationList_Pages: the list shows 25 applications a page by
// name, says which of how many, and links the other pages with plain
// links that keep the search; a page past the end shows the last page,
// and deleting the last row of the last page answers with the page before.
func TestApplicationList_Pages(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	ctx := context.Background()
	owner := b.signup(t, "owner@example.com", "Acme")
	other := b.signup(t, "other@example.com", "Other")
	br := b.sessionBrowser(t, owner.user)
	ids := map[string]string{}
	for i := 60; i >= 0; i-- { // created out of order
		a, err := b.store.CreateApplication(ctx, owner.team.ID, fmt.Sprintf("app-%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids[a.Name] = a.ID
	}
	if _, err := b.store.CreateApplication(ctx, other.team.ID, "app-99"); err != nil {
		t.Fatal(err)
	}
	names := func(r response) string {
		var out []string
		for _, n := range testid(r, "application-link").Nodes {
			out = append(out, strings.TrimSpace(n.FirstChild.Data))
		}
		if len(out) == 0 {
			return ""
		}
		return out[0] + ".." + out[len(out)-1] + fmt.Sprintf(" (%d)", len(out))
	}
	links := func(r response) []string {
		var out []string
		r.doc.Find(`[data-testid="application-pages"] a`).Each(func(_ int, a *goquery.Selection) {
			out = append(out, strings.TrimSpace(a.Text())+" "+a.AttrOr("href", ""))
		})
		return out
	}
	current := func(r response) string { return strings.TrimSpace(testid(r, "application-page-current").Text()) }
	count := func(r response) string {
		return strings.Join(strings.Fields(testid(r, "application-count").Text()), " ")
	}

	tests := []struct {
		path, names, current, count string
		links                       []string
	}{
		{"/applications", "app-00..app-24 (25)", "1", "Showing 1–25 of 61 applications",
			[]string{"2 /applications?page=2", "3 /applications?page=3", "Next → /applications?page=2"}},
		{"/applications?page=2", "app-25..app-49 (25)", "2", "Showing 26–50 of 61 applications",
			[]string{"← Previous /applications", "1 /applications", "3 /applications?page=3", "Next → /applications?page=3"}},
		{"/applications?page=3", "app-50..app-60 (11)", "3", "Showing 51–61 of 61 applications",
			[]string{"← Previous /applications?page=2", "1 /applications", "2 /applications?page=2"}},
		// Past the end: the last page. Not a number, or below 1: the first.
		{"/applications?page=9", "app-50..app-60 (11)", "3", "Showing 51–61 of 61 applications", nil},
		{"/applications?page=99999999999999999999", "app-00..app-24 (25)", "1", "Showing 1–25 of 61 applications", nil},
		{"/applications?page=9223372036854775807", "app-50..app-60 (11)", "3", "Showing 51–61 of 61 applications", nil},
		{"/applications?page=-2", "app-00..app-24 (25)", "1", "Showing 1–25 of 61 applications", nil},
		// The search narrows the pages and the links keep it.
		{"/applications?q=app-", "app-00..app-24 (25)", "1", "Showing 1–25 of 61 applications",
			[]string{"2 /applications?page=2&q=app-", "3 /applications?page=3&q=app-", "Next → /applications?page=2&q=app-"}},
		{"/applications?q=app-3&page=2", "app-30..app-39 (10)", "", "10 applications", []string{}},
	}
	for _, tt := range tests {
		r := br.get(tt.path)
		wantStatus(t, r, http.StatusOK)
		if got := names(r); got != tt.names {
			t.Errorf("%s listed %s, want %s", tt.path, got, tt.names)
		}
		if got := current(r); got != tt.current {
			t.Errorf("%s current page %q, want %q", tt.path, got, tt.current)
		}
		if got := count(r); got != tt.count {
			t.Errorf("%s says %q, want %q", tt.path, got, tt.count)
		}
		if got := links(r); tt.links != nil && strings.Join(got, ", ") != strings.Join(tt.links, ", ") {
			t.Errorf("%s links %q, want %q", tt.path, got, tt.links)
		}
	}

	// The search's htmx request gets the first page of what it finds, with
	// the page links in the fragment.
	req := httptest.NewRequest(http.MethodGet, "/applications?q=app", nil)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Target", "application-list")
	r := br.do(req)
	if got := names(r); got != "app-00..app-24 (25)" || testid(r, "application-page-next").AttrOr("href", "") != "/applications?page=2&q=app" {
		t.Errorf("htmx search: %s, next %q", got, testid(r, "application-page-next").AttrOr("href", ""))
	}

	// Delete the last page's rows down to one from that page: the delete
	// form carries the page, and once the page is gone the answer is the
	// page before, now the last.
	for i := 51; i <= 60; i++ {
		if err := b.store.DeleteApplication(ctx, owner.team.ID, ids[fmt.Sprintf("app-%02d", i)]); err != nil {
			t.Fatal(err)
		}
	}
	r = br.get("/applications?page=3")
	open, _ := testid(r, "application-delete-open").Attr("hx-get")
	if open != "/applications/"+ids["app-50"]+"/delete?page=3" {
		t.Fatalf("the last row's Delete… loads %q, want its form with page=3", open)
	}
	req = httptest.NewRequest(http.MethodGet, open, nil)
	req.Header.Set("HX-Request", "true")
	if v, _ := testid(br.do(req), "application-delete-form").Find(`input[name="page"]`).Attr("value"); v != "3" {
		t.Fatalf("the delete form carries page %q, want 3", v)
	}
	r = br.htmx("/applications/"+ids["app-50"]+"/delete", url.Values{"page": {"3"}, "confirm": {"app-50"}})
	wantStatus(t, r, http.StatusOK)
	if got := names(r); got != "app-25..app-49 (25)" || current(r) != "2" || testid(r, "application-page-next").Length() != 0 {
		t.Errorf("delete of page 3's last row answered with %s on page %q", got, current(r))
	}
}

// TestApplicationList_FilterStates: the state filter offers the states
// the store filters by, no more, no fewer.
func TestApplicationList_FilterStates(t *testing.T) {
	if !slices.Equal(partial.ApplicationStates, store.EnvironmentStates) {
		t.Fatalf("the filter offers %v, the store filters by %v", partial.ApplicationStates, store.EnvironmentStates)
	}
}
