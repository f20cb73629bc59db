package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// VisibilityRequest is PUT .../environments/{env}/visibility.
type VisibilityRequest struct {
	// Visibility is public, private, or "" to remove the setting (public).
	Visibility string `json:"visibility"`
}

// RollbackRequest is PUT .../environments/{env}/rollback.
type RollbackRequest struct {
	// Rollback is automatic, manual, or "" to remove the setting (automatic
	// for promoted environments, manual otherwise).
	Rollback string `json:"rollback"`
}

// environmentVisibility sets the strictest visibility an environment's
// routes get, in its manifest block.
func (h *handler) environmentVisibility(c *fiber.Ctx) error {
	return h.runEdit(c, func(appID string) (func(*manifest.Manifest) error, *badBody, error) {
		var req VisibilityRequest
		if bad := decode(c.Body(), &req); bad != nil {
			return nil, bad, nil
		}
		edit, err := service.EditEnvironmentSetting(c.UserContext(), h.store, callerOf(c).actor(), appID, h.environmentName(c, appID), service.SettingVisibility, req.Visibility)
		return edit, nil, err
	})
}

// environmentRollback sets what happens when an environment's rollout
// fails, in its manifest block.
func (h *handler) environmentRollback(c *fiber.Ctx) error {
	return h.runEdit(c, func(appID string) (func(*manifest.Manifest) error, *badBody, error) {
		var req RollbackRequest
		if bad := decode(c.Body(), &req); bad != nil {
			return nil, bad, nil
		}
		edit, err := service.EditEnvironmentSetting(c.UserContext(), h.store, callerOf(c).actor(), appID, h.environmentName(c, appID), service.SettingRollback, req.Rollback)
		return edit, nil, err
	})
}
