package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/page"
)

// tokenCreate creates a token and shows its secret in this response only.
func (h *handler) tokenCreate(c *fiber.Ctx) error {
	var scopes []string
	for _, s := range c.Context().PostArgs().PeekMulti("scopes") {
		scopes = append(scopes, string(s))
	}
	_, secret, err := service.CreateToken(c.UserContext(), h.store, visitorOf(c).actor(),
		service.TokenRequest{Name: c.FormValue("name"), Scopes: scopes}, h.now())
	errs, bad := fieldErrors(err)
	if err != nil && !bad {
		return err
	}
	tv, err := h.tokensView(c)
	if err != nil {
		return err
	}
	if bad {
		tv.Name, tv.Errors = c.FormValue("name"), errs
		for _, s := range scopes {
			tv.Checked[s] = true
		}
		return h.render(c, http.StatusUnprocessableEntity, "API tokens", page.Tokens(tv))
	}
	tv.Created = secret
	return h.render(c, http.StatusCreated, "API tokens", page.Tokens(tv))
}
