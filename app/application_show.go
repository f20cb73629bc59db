package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views/page"
)

// applicationShow is the application's Overview tab.
func (h *handler) applicationShow(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "overview")
	if err != nil {
		return err
	}
	envs, err := h.environmentPage(c, a.TeamID, a.ID)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name, page.ApplicationOverview(header, envs))
}

// environmentPage loads what the Overview and Environments tabs show.
func (h *handler) environmentPage(c *fiber.Ctx, teamID, appID string) ([]page.EnvironmentView, error) {
	statuses, err := h.environmentStatuses(c.UserContext(), teamID, appID)
	if err != nil {
		return nil, err
	}
	who, err := h.people(c.UserContext(), teamID)
	if err != nil {
		return nil, err
	}
	return h.environmentViews(statuses, who, appID), nil
}
