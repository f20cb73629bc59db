package app_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

// TestManifestPlan_NewApplicationRenderedWarnings: the dashboard plan of
// a manifest whose application has no environments yet (a brand-new
// application, or one created without a manifest) renders each
// environment saving it would create with its own variables, so
// start-first with a writable volume is flagged for production only.
func TestManifestPlan_NewApplicationRenderedWarnings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	data, err := os.ReadFile("../manifest/testdata/warnings/rollout_by_variable.toml")
	if err != nil {
		t.Fatal(err)
	}
	startFirst := func(form url.Values) []string {
		t.Helper()
		r := br.htmx("/manifest/plan", form)
		wantStatus(t, r, http.StatusOK)
		var out []string
		for line := range strings.SplitSeq(testid(r, "plan").Text(), "\n") {
			if strings.Contains(line, "rollout_start_first_writable_volume") {
				out = append(out, strings.TrimSpace(line))
			}
		}
		return out
	}
	form := url.Values{"manifest": {string(data)}}
	if w := startFirst(form); len(w) != 1 || !strings.Contains(w[0], "environment production: ") {
		t.Errorf("new application plan warnings %q, want start-first for production only", w)
	}
	a, err := b.store.CreateApplication(context.Background(), owner.team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	form.Set("application", a.ID)
	if w := startFirst(form); len(w) != 1 || !strings.Contains(w[0], "environment production: ") {
		t.Errorf("plan of an application without a manifest %q, want start-first for production only", w)
	}
}
