package store_test

import (
	"slices"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func init() {
	for _, m := range []string{"ListEventPage", "ListEventFacets", "ListEventVerbs"} {
		tenancyCovered[m] = "TestStore_ListEventPage"
	}
}

// TestStore_ListEventPage walks the audit log backwards page by page: each
// event shows up once, newest first, the last page has no cursor, filters
// by application (its environments and deployments included), by actor
// and by verb hold across pages, and another team's events never appear;
// an application's verbs are its own events'.
func TestStore_ListEventPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	team := b.a.team.ID
	d, err := b.st.CreateDeployment(b.ctx, team, store.DeploymentParams{EnvironmentID: b.a.env.ID, Origin: store.OriginBuild, Actor: "system"})
	must(t, err)
	blog, err := b.st.CreateApplication(b.ctx, team, "blog")
	must(t, err)
	record := func(teamID string, p store.EventParams) int64 {
		t.Helper()
		e, err := b.st.RecordEvent(b.ctx, teamID, p)
		must(t, err)
		return e.ID
	}
	owner := "user:" + b.a.owner.ID
	var all, notes, byOwner []int64
	for i := range 7 {
		objects := []struct{ typ, id string }{{"application", b.a.app.ID}, {"environment", b.a.env.ID}, {"deployment", d.ID}, {"application", blog.ID}}
		o := objects[i%len(objects)]
		actor := "system"
		if i%2 == 0 {
			actor = owner
		}
		id := record(team, store.EventParams{Actor: actor, Verb: "thing.happen", ObjectType: o.typ, ObjectID: o.id})
		all = append([]int64{id}, all...)
		if o.id != blog.ID {
			notes = append([]int64{id}, notes...)
		}
		if actor == owner {
			byOwner = append([]int64{id}, byOwner...)
		}
		// Another team's events, naming team A's objects with their own
		// actor and kind: neither may show up in A's pages or facets.
		record(b.b.team.ID, store.EventParams{Actor: "token:beta", Verb: "thing.happen", ObjectType: "secret", ObjectID: b.a.app.ID})
	}
	walk := func(f store.EventFilter) (ids []int64, pages int) {
		t.Helper()
		for {
			p, err := b.st.ListEventPage(b.ctx, team, f)
			must(t, err)
			pages++
			for _, e := range p.Events {
				if e.TeamID != team {
					t.Fatalf("event %d of team %s in team %s's log", e.ID, e.TeamID, team)
				}
				ids = append(ids, e.ID)
			}
			if p.NextBefore == 0 {
				return ids, pages
			}
			if pages > 20 {
				t.Fatal("paging does not end")
			}
			f.BeforeID = p.NextBefore
		}
	}
	tests := []struct {
		name  string
		f     store.EventFilter
		want  []int64
		pages int
	}{
		{"everything by 3", store.EventFilter{Limit: 3}, all, 3},
		{"exact pages", store.EventFilter{Limit: 7}, all, 1},
		{"one application by 2", store.EventFilter{Limit: 2, ApplicationID: b.a.app.ID}, notes, 3},
		{"one actor by 2", store.EventFilter{Limit: 2, Actor: owner}, byOwner, 2},
		{"actor and application", store.EventFilter{Limit: 1, Actor: "system", ApplicationID: blog.ID}, []int64{all[3]}, 1},
		{"nothing matches", store.EventFilter{Actor: owner, ApplicationID: blog.ID}, nil, 1},
		{"another team's application", store.EventFilter{ApplicationID: b.b.app.ID}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, pages := walk(tt.f)
			if !slices.Equal(ids, tt.want) || pages != tt.pages {
				t.Errorf("ids %v in %d pages, want %v in %d", ids, pages, tt.want, tt.pages)
			}
		})
	}

	facets, err := b.st.ListEventFacets(b.ctx, team)
	must(t, err)
	if !slices.Equal(facets.Kinds, []string{"application", "deployment", "environment"}) || !slices.Equal(facets.Actors, []string{"system", owner}) {
		t.Errorf("facets %+v", facets)
	}

	// Verbs: the application's (its deployments' included), not another
	// application's nor another team's naming it; the verb filter pages.
	request := record(team, store.EventParams{Actor: owner, Verb: "deployment.request", ObjectType: "deployment", ObjectID: d.ID})
	record(team, store.EventParams{Actor: owner, Verb: "blog.only", ObjectType: "application", ObjectID: blog.ID})
	record(b.b.team.ID, store.EventParams{Actor: "token:beta", Verb: "beta.only", ObjectType: "application", ObjectID: b.a.app.ID})
	verbs, err := b.st.ListEventVerbs(b.ctx, team, b.a.app.ID)
	must(t, err)
	if !slices.Equal(verbs, []string{"deployment.request", "thing.happen"}) {
		t.Errorf("verbs %v, want deployment.request and thing.happen", verbs)
	}
	if ids, pages := walk(store.EventFilter{Limit: 2, ApplicationID: b.a.app.ID, Verb: "thing.happen"}); !slices.Equal(ids, notes) || pages != 3 {
		t.Errorf("verb filter: ids %v in %d pages, want %v in 3", ids, pages, notes)
	}
	if ids, _ := walk(store.EventFilter{Verb: "deployment.request"}); !slices.Equal(ids, []int64{request}) {
		t.Errorf("verb filter: ids %v, want %d", ids, request)
	}
}
