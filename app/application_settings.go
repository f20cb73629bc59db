package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// applicationSettings is the Settings tab.
func (h *handler) applicationSettings(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "settings")
	if err != nil {
		return err
	}
	t, err := h.settingsTab(c, a)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name+" · Settings", page.ApplicationSettings(header, t))
}

// settingsTab reads the repository connection from the saved manifest.
func (h *handler) settingsTab(c *fiber.Ctx, a store.Application) (page.SettingsTab, error) {
	m, _, err := savedmanifest.CurrentLenient(c.UserContext(), h.store, a.TeamID, a.ID)
	if err != nil || m == nil || m.Spec.Manifest == nil {
		return page.SettingsTab{}, err
	}
	r := &page.RepositoryView{Path: m.Spec.Manifest.Path}
	if repo := m.Spec.Manifest.Repository; repo != nil {
		r.URL, r.Branch = repo.URL, repo.Branch
	}
	return page.SettingsTab{Repository: r}, nil
}
