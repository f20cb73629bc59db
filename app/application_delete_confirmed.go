package app

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/page"
)

// applicationDeleteConfirmed deletes the application from its Settings
// tab once the visitor typed its name.
func (h *handler) applicationDeleteConfirmed(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "settings")
	if err != nil {
		return err
	}
	if strings.TrimSpace(c.FormValue("confirm")) != a.Name {
		err = &service.InputError{Field: "confirm", Code: "confirmation_mismatch", Message: fmt.Sprintf("type the application's name, %s, exactly", a.Name)}
	} else {
		err = service.DeleteApplication(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID)
	}
	if msg, ok := editErrorMessage(err); ok {
		t, lerr := h.settingsTab(c, a)
		if lerr != nil {
			return lerr
		}
		t.DeleteError = msg
		return h.render(c, formErrorStatus(c), a.Name+" · Settings", page.ApplicationSettings(header, t))
	}
	if err != nil {
		return err
	}
	h.flashOK(c, deletedMessage(a.Name))
	return redirect(c, "/applications")
}
