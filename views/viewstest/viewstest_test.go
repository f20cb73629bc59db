package viewstest

import "testing"

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"/applications/*/variables", "/applications/app_1/variables", true},
		{"/applications/*/variables", "/applications/app_1/variables/unset", false},
		{"/applications/*/variables", "/applications//variables", false},
		{"/teams/*/switch", "/teams/team_a/switch", true},
		{"/applications/*/links/*", "/applications/app_1/links/imports", true},
		{"/applications", "/applications/", true},
		{"/logout", "/login", false},
	} {
		if got := Match(c.pattern, c.path); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

// TestTargets_Forms: the scan finds the dashboard's forms, and none of
// its URLs is one it could not follow.
func TestTargets_Forms(t *testing.T) {
	t.Parallel()
	targets, err := Targets()
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string]bool{}
	for _, tg := range targets {
		if tg.Form() {
			for _, u := range tg.URLs {
				forms[tg.Method+" "+u] = true
			}
		}
	}
	for _, want := range []string{"POST /members/invitations", "POST /applications/*/variables/unset", "GET /search", "POST /manifest/validate"} {
		if !forms[want] {
			t.Errorf("the scan misses the form %s", want)
		}
	}
}
