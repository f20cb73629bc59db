package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// ApplicationList is GET /applications: the team's applications by name.
// With ?limit= it is one page of them, and NextAfter is the `after` of the
// next page, absent on the last one.
type ApplicationList struct {
	Applications []Application `json:"applications"`
	NextAfter    string        `json:"next_after,omitempty"`
}

// maxApplicationPage bounds ?limit= of the applications list.
const maxApplicationPage = 500

var applicationListQuery = []QueryParam{
	{"limit", "integer", "At most this many applications (1-500), by name; without it, all of them."},
	{"after", "string", "Only applications whose name sorts after this one: the next_after of the previous page."},
}

// Application is an application as the API shows it.
type Application struct {
	ID              string    `json:"id"`
	Name            string    `json:"name"`
	CurrentRevision int64     `json:"current_revision"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
	// Repository is the sync and read state of a repository-backed
	// application (GET /applications/{app} only; application_repository.go).
	Repository *RepositoryStatus `json:"repository,omitempty"`
}

func newApplication(a store.Application) Application {
	return Application{ID: a.ID, Name: a.Name, CurrentRevision: a.CurrentRevision, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

// applicationList lists the team's applications by name: all of them, or
// with ?limit= a page at a time, the next page after the name ?after=
// (a keyset cursor, so a page stays stable while applications come and go).
func (h *handler) applicationList(c *fiber.Ctx) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	var list ApplicationList
	var apps []store.Application
	if c.Query("limit") == "" && c.Query("after") == "" {
		all, err := h.store.ListApplications(ctx, team)
		if err != nil {
			return h.fail(c, err)
		}
		apps = all
	} else {
		n, err := strconv.Atoi(c.Query("limit"))
		if err != nil || n < 1 || n > maxApplicationPage {
			return WriteError(c, http.StatusBadRequest, "limit_invalid", "limit must be a whole number from 1 to 500", map[string]any{"field": "limit"})
		}
		p, err := h.store.ListApplicationPage(ctx, team, store.ApplicationQuery{After: c.Query("after"), Limit: n})
		if err != nil {
			return h.fail(c, err)
		}
		apps = p.Applications
		if p.Total > len(apps) {
			list.NextAfter = apps[len(apps)-1].Name
		}
	}
	list.Applications = make([]Application, len(apps))
	for i, a := range apps {
		list.Applications[i] = newApplication(a)
	}
	return c.JSON(list)
}
