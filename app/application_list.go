package app

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// applicationList shows the team's applications, filtered by ?q= (a name
// substring, matched in the store query) and ?state= (an environment
// state). The search form's htmx requests get only the list back.
func (h *handler) applicationList(c *fiber.Ctx) error {
	f := applicationFilter(c.Query)
	rows, err := h.applicationRowsFiltered(c, f)
	if err != nil {
		return err
	}
	if c.Get("HX-Request") == "true" && c.Get("HX-Target") == "application-list" {
		return h.render(c, http.StatusOK, "Applications", partial.ApplicationList(rows, f))
	}
	editor := editorFor(h.viewContext(c), "", 0, "")
	if c.Query("example") != "" {
		editor.Source, editor.Starter = starterManifest("my-app", h.publicURL(c)), true
	}
	steps, err := h.gettingStarted(c.UserContext(), visitorOf(c).current.Team.ID)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "Applications", page.WithGettingStarted(steps, page.Applications(rows, f, "", nil, editor)))
}

// applicationFilter reads the list's filter through value (the query
// string's or the form's): q trimmed, and state only when it is one the
// list filters by.
func applicationFilter(value func(key string, defaultValue ...string) string) partial.ApplicationFilter {
	f := partial.ApplicationFilter{Query: strings.TrimSpace(value("q"))}
	if st := value("state"); slices.Contains(partial.ApplicationStates, st) {
		f.State = st
	}
	return f
}

// applicationRowsFiltered is the list as f filters it.
func (h *handler) applicationRowsFiltered(c *fiber.Ctx, f partial.ApplicationFilter) ([]partial.ApplicationRow, error) {
	rows, err := h.applicationRowsMatching(c, f.Query)
	if err != nil || f.State == "" {
		return rows, err
	}
	return slices.DeleteFunc(rows, func(r partial.ApplicationRow) bool {
		return !slices.ContainsFunc(r.Environments, func(e partial.EnvironmentBadge) bool { return e.State == f.State })
	}), nil
}

// applicationRows is the unfiltered list.
func (h *handler) applicationRows(c *fiber.Ctx) ([]partial.ApplicationRow, error) {
	return h.applicationRowsMatching(c, "")
}

// shortCommitLength is how much of a commit SHA the list shows.
const shortCommitLength = 7

func (h *handler) applicationRowsMatching(c *fiber.Ctx, query string) ([]partial.ApplicationRow, error) {
	ctx, teamID := c.UserContext(), visitorOf(c).current.Team.ID
	apps, err := h.store.SearchApplications(ctx, teamID, query)
	if err != nil {
		return nil, err
	}
	// A few queries whatever the number of applications: environments and
	// their latest deployments are read for the whole team at once, and
	// the members who deployed only when something was deployed.
	envs, err := h.store.ListEnvironmentsLatest(ctx, teamID)
	if err != nil {
		return nil, err
	}
	var who people
	byApp := map[string][]store.EnvironmentLatest{}
	for _, e := range envs {
		byApp[e.ApplicationID] = append(byApp[e.ApplicationID], e)
		if e.Latest != nil && who == nil {
			if who, err = h.people(ctx, teamID); err != nil {
				return nil, err
			}
		}
	}
	rows := make([]partial.ApplicationRow, len(apps))
	lastOf := make([]*store.Deployment, len(apps))
	for i, a := range apps {
		rows[i] = partial.ApplicationRow{ID: a.ID, Name: a.Name, Revision: a.CurrentRevision}
		var last *store.Deployment
		for _, e := range byApp[a.ID] {
			d := e.Latest
			rows[i].Environments = append(rows[i].Environments, partial.EnvironmentBadge{Name: e.Name, State: environmentState(d, e.EverSucceeded)})
			if d != nil && (last == nil || d.CreatedAt.After(last.CreatedAt)) {
				last = d
			}
		}
		if last != nil {
			rows[i].LastDeploy = who.name(last.Actor) + ", " + when(&last.CreatedAt)
			lastOf[i] = last
		}
	}
	return rows, h.addLastCommits(ctx, teamID, rows, lastOf)
}

// addLastCommits sets each row's short commit from its last deployment, in
// one query.
func (h *handler) addLastCommits(ctx context.Context, teamID string, rows []partial.ApplicationRow, lastOf []*store.Deployment) error {
	var ids []string
	for _, d := range lastOf {
		if d != nil {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	commits, err := h.store.DeploymentCommits(ctx, teamID, ids)
	if err != nil {
		return err
	}
	for i, d := range lastOf {
		if d == nil {
			continue
		}
		commit := commits[d.ID]
		if len(commit) > shortCommitLength {
			commit = commit[:shortCommitLength]
		}
		rows[i].LastCommit = commit
	}
	return nil
}
