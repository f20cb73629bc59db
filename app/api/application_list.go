package api

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// ApplicationList is GET /applications.
type ApplicationList struct {
	Applications []Application `json:"applications"`
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

func (h *handler) applicationList(c *fiber.Ctx) error {
	apps, err := h.store.ListApplications(c.UserContext(), callerOf(c).token.TeamID)
	if err != nil {
		return h.fail(c, err)
	}
	out := make([]Application, len(apps))
	for i, a := range apps {
		out[i] = newApplication(a)
	}
	return c.JSON(ApplicationList{Applications: out})
}
