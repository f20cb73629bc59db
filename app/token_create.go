package app

import (
	"net/http"
	"strconv"
	"time"

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
	req := service.TokenRequest{Name: c.FormValue("name"), Scopes: scopes}
	expiry := c.FormValue("expires_in_days")
	var err error
	if expiry != "" {
		var days int
		if days, err = strconv.Atoi(expiry); err != nil || days <= 0 || days > 3650 {
			err = &service.InputError{Field: "expires_in", Code: "expires_in_invalid", Message: "choose when the token expires, or never"}
		}
		req.ExpiresIn = time.Duration(days) * 24 * time.Hour
	}
	var secret string
	if err == nil {
		_, secret, err = service.CreateToken(c.UserContext(), h.store, visitorOf(c).actor(), req, h.now())
	}
	errs, bad := fieldErrors(err)
	if err != nil && !bad {
		return err
	}
	tv, err := h.tokensView(c)
	if err != nil {
		return err
	}
	if bad {
		tv.Name, tv.Errors, tv.Expiry = c.FormValue("name"), errs, expiry
		for _, s := range scopes {
			tv.Checked[s] = true
		}
		return h.render(c, http.StatusUnprocessableEntity, "API tokens", page.Tokens(tv))
	}
	tv.Created = secret
	return h.render(c, http.StatusCreated, "API tokens", page.Tokens(tv))
}
