package app

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// applicationDelete deletes from the list once the visitor typed the
// application's name (as on Settings) and, for htmx, answers with the
// refreshed list, filtered as the one the visitor deleted from (its q,
// state and page travel with the delete form).
func (h *handler) applicationDelete(c *fiber.Ctx) error {
	a, err := h.store.GetApplication(c.UserContext(), visitorOf(c).current.Team.ID, c.Params("app"))
	if err != nil {
		return err
	}
	f := applicationFilter(c.FormValue)
	if strings.TrimSpace(c.FormValue("confirm")) != a.Name {
		// The list guards deletion as Settings does: by the typed name.
		h.setFlash(c, views.Flash{Kind: "error", Message: fmt.Sprintf("%s was not deleted: type its name, %s, exactly to confirm (confirmation_mismatch).", a.Name, a.Name)})
		return h.applicationListAnswer(c, f, http.StatusUnprocessableEntity)
	}
	err = service.DeleteApplication(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID)
	var ie *service.InputError
	if errors.As(err, &ie) {
		// deployment_in_progress: the page says which deployment to wait
		// for or cancel.
		return fiber.NewError(http.StatusConflict, ie.Message+" ("+ie.Code+")")
	}
	if err != nil {
		return err
	}
	h.flashOK(c, deletedMessage(a.Name))
	if c.Get("HX-Request") != "true" {
		return redirect(c, f.URL())
	}
	return h.applicationListAnswer(c, f, http.StatusOK)
}

// applicationListAnswer shows the list filtered by f: the fragment to
// htmx, else the whole page.
func (h *handler) applicationListAnswer(c *fiber.Ctx, f partial.ApplicationFilter, status int) error {
	list, err := h.applicationListing(c, f)
	if err != nil {
		return err
	}
	if isFragment(c) {
		return h.render(c, formErrorStatus(c), "Applications", partial.ApplicationList(list))
	}
	return h.render(c, status, "Applications", page.Applications(list, "", nil, editorFor(h.viewContext(c), "", 0, "")))
}

// deletedMessage is the flash after deleting an application.
func deletedMessage(name string) string {
	return "Deleted application " + name + ". Its services are being stopped and removed; named volumes are kept in Docker."
}
