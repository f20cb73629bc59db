package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// pageNames lists a page's application names.
func pageNames(p store.ApplicationPage) []string {
	var out []string
	for _, a := range p.Applications {
		out = append(out, a.Name)
	}
	return out
}

func TestStore_ListApplicationPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	team := b.a.team.ID
	// The team has "notes" (setup's) and eight more, created out of order.
	for _, n := range []string{"web-7", "web-2", "web-5", "web-1", "web-8", "web-3", "web-6", "web-4"} {
		_, err := b.st.CreateApplication(b.ctx, team, n)
		must(t, err)
	}
	gone, err := b.st.CreateApplication(b.ctx, team, "web-0")
	must(t, err)
	must(t, b.st.DeleteApplication(b.ctx, team, gone.ID))
	// The other team's applications share the names and never show.
	for _, n := range []string{"web-1", "web-9"} {
		_, err := b.st.CreateApplication(b.ctx, b.b.team.ID, n)
		must(t, err)
	}

	list := func(q store.ApplicationQuery) store.ApplicationPage {
		t.Helper()
		p, err := b.st.ListApplicationPage(b.ctx, team, q)
		must(t, err)
		for _, a := range p.Applications {
			if a.TeamID != team {
				t.Fatalf("another team's application %+v", a)
			}
		}
		return p
	}
	want := []string{"notes", "web-1", "web-2", "web-3", "web-4", "web-5", "web-6", "web-7", "web-8"}
	var walked []string
	for offset := 0; offset < 9; offset += 4 {
		p := list(store.ApplicationQuery{Limit: 4, Offset: offset})
		if p.Total != 9 {
			t.Errorf("offset %d: total %d, want 9 (not the deleted one, not the other team's)", offset, p.Total)
		}
		walked = append(walked, pageNames(p)...)
	}
	if !slices.Equal(walked, want) {
		t.Errorf("pages of 4 in order: %v, want %v", walked, want)
	}
	if p := list(store.ApplicationQuery{Limit: 4, Offset: 8}); !slices.Equal(pageNames(p), []string{"web-8"}) {
		t.Errorf("last page: %v, want the one left", pageNames(p))
	}
	if p := list(store.ApplicationQuery{Limit: 4, Offset: 9}); len(p.Applications) != 0 || p.Total != 9 {
		t.Errorf("past the end: %v of %d, want none of 9", pageNames(p), p.Total)
	}
	if p := list(store.ApplicationQuery{Name: "WEB-", Limit: 2, Offset: 2}); !slices.Equal(pageNames(p), []string{"web-3", "web-4"}) || p.Total != 8 {
		t.Errorf("name WEB-, second page of 2: %v of %d, want web-3, web-4 of 8", pageNames(p), p.Total)
	}
	// % and _ are literal: no name has them.
	for _, q := range []string{"%", "_", `\`} {
		if p := list(store.ApplicationQuery{Name: q, Limit: 10}); p.Total != 0 || len(p.Applications) != 0 {
			t.Errorf("name %q: %v of %d, want none", q, pageNames(p), p.Total)
		}
	}
	// The keyset cursor: names after it, counted after it.
	if p := list(store.ApplicationQuery{After: "web-5", Limit: 2}); !slices.Equal(pageNames(p), []string{"web-6", "web-7"}) || p.Total != 3 {
		t.Errorf("after web-5: %v of %d, want web-6, web-7 of 3", pageNames(p), p.Total)
	}
	if p := list(store.ApplicationQuery{After: "web-8", Limit: 2}); len(p.Applications) != 0 || p.Total != 0 {
		t.Errorf("after the last: %v of %d, want none", pageNames(p), p.Total)
	}
	if p := list(store.ApplicationQuery{Name: "nothing", Limit: 10}); p.Total != 0 || len(p.Applications) != 0 {
		t.Errorf("no match: %v of %d", pageNames(p), p.Total)
	}
	// Through the other team: only its own two.
	theirs, err := b.st.ListApplicationPage(b.ctx, b.b.team.ID, store.ApplicationQuery{Name: "web", Limit: 10})
	must(t, err)
	if !slices.Equal(pageNames(theirs), []string{"web-1", "web-9"}) || theirs.Total != 2 {
		t.Errorf("other team: %v of %d", pageNames(theirs), theirs.Total)
	}
}

// TestStore_ListApplicationPage_StateIsEnvironmentState: filtering by an
// environment state in SQL keeps exactly the applications with an
// environment EnvironmentState puts in that state, in every situation a
// deployment history can leave an environment in; previews do not count.
func TestStore_ListApplicationPage_StateIsEnvironmentState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	team := b.a.team.ID
	success := []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded}
	histories := map[string][][]store.DeploymentState{
		"never":              nil,
		"deploying":          {nil},
		"rolling":            {{store.StateCapturing, store.StatePreparing, store.StateRollingOut}},
		"ok":                 {success},
		"degraded":           {success, {store.StateCapturing, store.StateFailed}},
		"broken":             {{store.StateFailed}},
		"cancelled":          {{store.StateCancelled}},
		"superseded":         {{store.StateSuperseded}},
		"ok-then-cancelled":  {success, {store.StateCancelled}},
		"ok-then-superseded": {success, {store.StateSuperseded}},
		"failed-then-ok":     {{store.StateFailed}, success},
	}
	for name, history := range histories {
		a, err := b.st.CreateApplication(b.ctx, team, name)
		must(t, err)
		env, err := b.st.CreateEnvironment(b.ctx, team, store.EnvironmentParams{ApplicationID: a.ID, Kind: store.KindEnvironment, Name: "production", Slug: name + "-production"})
		must(t, err)
		for _, path := range history {
			deployThrough(t, b, team, env.ID, path...)
		}
	}
	// A failed preview of "ok" does not make it failed.
	ok, err := b.st.GetApplicationByName(b.ctx, team, "ok")
	must(t, err)
	preview, err := b.st.CreateEnvironment(b.ctx, team, store.EnvironmentParams{ApplicationID: ok.ID, Kind: store.KindPreview, Name: "feature", Slug: "ok-feature", Branch: "feature"})
	must(t, err)
	deployThrough(t, b, team, preview.ID, store.StateFailed)

	latest, err := b.st.LatestDeploymentPerEnvironment(b.ctx, team, "")
	must(t, err)
	wantByState := map[string][]string{}
	apps, err := b.st.ListApplications(b.ctx, team)
	must(t, err)
	envs, err := b.st.ListTeamEnvironments(b.ctx, team)
	must(t, err)
	for _, a := range apps {
		for _, e := range envs {
			if e.ApplicationID != a.ID || e.Kind != store.KindEnvironment {
				continue
			}
			var d *store.Deployment
			l, deployed := latest[e.ID]
			if deployed {
				d = &l.Latest
			}
			s := store.EnvironmentState(d, l.EverSucceeded)
			wantByState[s] = append(wantByState[s], a.Name)
		}
	}
	seen := 0
	for _, s := range store.EnvironmentStates {
		p, err := b.st.ListApplicationPage(b.ctx, team, store.ApplicationQuery{State: s, Limit: 50})
		must(t, err)
		seen += p.Total
		if got := pageNames(p); !slices.Equal(got, wantByState[s]) || p.Total != len(got) {
			t.Errorf("state %s: %v (total %d), want %v", s, got, p.Total, wantByState[s])
		}
	}
	// Every application ("notes" and the eleven) has one environment, so
	// the states partition them.
	if seen != len(histories)+1 {
		t.Errorf("%d applications across the states, want %d: %v", seen, len(histories)+1, wantByState)
	}
	if got := fmt.Sprint(wantByState["failed"]); got != "[broken]" {
		t.Errorf("failed: %s, want only broken (the preview does not count)", got)
	}
}
