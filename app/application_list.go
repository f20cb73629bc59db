package app

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// applicationList shows a page of the team's applications, filtered by
// ?q= (a name substring) and ?state= (an environment state), both matched
// in the store query, on ?page= (1 when absent). The search form's htmx
// requests get only the list back.
func (h *handler) applicationList(c *fiber.Ctx) error {
	list, err := h.applicationListing(c, applicationFilter(c.Query))
	if err != nil {
		return err
	}
	if c.Get("HX-Request") == "true" && c.Get("HX-Target") == "application-list" {
		return h.render(c, http.StatusOK, "Applications", partial.ApplicationList(list))
	}
	editor := editorFor(h.viewContext(c), "", 0, "")
	if c.Query("example") != "" {
		editor.Source, editor.Starter = starterManifest("my-app", h.publicURL(c)), true
	}
	steps, err := h.gettingStarted(c, visitorOf(c).current.Team.ID)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "Applications", page.WithGettingStarted(steps, page.Applications(list, "", nil, editor)))
}

// applicationPageSize is how many applications a page of the list shows.
const applicationPageSize = 25

// applicationFilter reads the list's filter through value (the query
// string's or the form's): q trimmed, state only when it is one the list
// filters by, and page a whole number from 1 (1 otherwise).
func applicationFilter(value func(key string, defaultValue ...string) string) partial.ApplicationFilter {
	f := partial.ApplicationFilter{Query: strings.TrimSpace(value("q")), Page: 1}
	if st := value("state"); slices.Contains(store.EnvironmentStates, st) {
		f.State = st
	}
	if n, err := strconv.Atoi(value("page")); err == nil && n > 1 {
		f.Page = n
	}
	return f
}

// applicationListing is the page of the list f asks for; a page past the
// end (the list shrank, or a hand-made address) shows the last page.
func (h *handler) applicationListing(c *fiber.Ctx, f partial.ApplicationFilter) (partial.ApplicationListing, error) {
	ctx, teamID := c.UserContext(), visitorOf(c).current.Team.ID
	q := store.ApplicationQuery{Name: f.Query, State: f.State, Limit: applicationPageSize, Offset: (f.Page - 1) * applicationPageSize}
	// Offsets past what an int holds are past the end too.
	if f.Page > 1 && q.Offset/applicationPageSize != f.Page-1 {
		q.Offset = math.MaxInt32
	}
	list := func(q store.ApplicationQuery) (store.ApplicationPage, error) {
		return teamRead(h, c, teamID, readKey("applications", q.Name, q.State, q.After, q.Limit, q.Offset), func() (store.ApplicationPage, error) {
			return h.store.ListApplicationPage(ctx, teamID, q)
		})
	}
	p, err := list(q)
	if err != nil {
		return partial.ApplicationListing{}, err
	}
	if len(p.Applications) == 0 && p.Total > 0 {
		f.Page = (p.Total + applicationPageSize - 1) / applicationPageSize
		q.Offset = (f.Page - 1) * applicationPageSize
		if p, err = list(q); err != nil {
			return partial.ApplicationListing{}, err
		}
	}
	rows, err := h.applicationRows(c, teamID, p.Applications)
	return partial.ApplicationListing{Rows: rows, Filter: f, Total: p.Total, PageSize: applicationPageSize}, err
}

// firstApplicationPage is the list's first page, unfiltered.
func (h *handler) firstApplicationPage(c *fiber.Ctx) (partial.ApplicationListing, error) {
	return h.applicationListing(c, partial.ApplicationFilter{Page: 1})
}

// shortCommitLength is how much of a commit SHA the list shows.
const shortCommitLength = 7

// applicationRows are the list's rows of apps: a few queries whatever
// their number, as their environments with their newest deployments (and
// those deployments' commits) are read for all of them at once, and the
// members who deployed only when something was deployed.
func (h *handler) applicationRows(c *fiber.Ctx, teamID string, apps []store.Application) ([]partial.ApplicationRow, error) {
	ctx := c.UserContext()
	if len(apps) == 0 {
		return nil, nil
	}
	ids := make([]string, len(apps))
	for i, a := range apps {
		ids[i] = a.ID
	}
	envs, err := teamRead(h, c, teamID, readKey("environments-latest", ids), func() ([]store.EnvironmentLatest, error) {
		return h.store.ListEnvironmentsLatest(ctx, teamID, ids)
	})
	if err != nil {
		return nil, err
	}
	var who people
	byApp := map[string][]store.EnvironmentLatest{}
	for _, e := range envs {
		byApp[e.ApplicationID] = append(byApp[e.ApplicationID], e)
		if e.Latest != nil && who == nil {
			if who, err = teamRead(h, c, teamID, "people", func() (people, error) { return h.people(ctx, teamID) }); err != nil {
				return nil, err
			}
		}
	}
	rows := make([]partial.ApplicationRow, len(apps))
	for i, a := range apps {
		rows[i] = partial.ApplicationRow{ID: a.ID, Name: a.Name, Revision: a.CurrentRevision}
		var last *store.EnvironmentLatest
		for _, e := range byApp[a.ID] {
			rows[i].Environments = append(rows[i].Environments, partial.EnvironmentBadge{Name: e.Name, State: store.EnvironmentState(e.Latest, e.EverSucceeded)})
			if e.Latest != nil && (last == nil || e.Latest.CreatedAt.After(last.Latest.CreatedAt)) {
				last = &e
			}
		}
		if last != nil {
			rows[i].LastDeploy = who.name(last.Latest.Actor) + ", " + when(&last.Latest.CreatedAt)
			rows[i].LastCommit = last.Commit
			if len(rows[i].LastCommit) > shortCommitLength {
				rows[i].LastCommit = rows[i].LastCommit[:shortCommitLength]
			}
		}
	}
	return rows, nil
}
