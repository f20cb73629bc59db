package app

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

func (h *handler) loginCreate(c *fiber.Ctx) error {
	ctx := c.UserContext()
	form := page.LoginForm{Email: strings.TrimSpace(c.FormValue("email")), Next: c.FormValue("next")}
	pw := c.FormValue("password")
	fail := func(status int, field, msg string) error {
		form.Errors = map[string]string{field: msg}
		return h.render(c, status, "Log in", page.Login(form))
	}
	switch {
	case form.Email == "":
		return fail(http.StatusUnprocessableEntity, "email", "enter your e-mail address")
	case service.CheckCharacters("email", "e-mail address", form.Email) != nil:
		// No stored address holds a control character, and Postgres
		// would refuse a NUL in the lookup.
		return fail(http.StatusUnprocessableEntity, "email", "enter an e-mail address like name@example.com")
	case pw == "":
		return fail(http.StatusUnprocessableEntity, "password", "enter your password")
	case len(pw) > auth.MaxPasswordBytes:
		return fail(http.StatusUnprocessableEntity, "password", "password must be at most 128 bytes")
	}
	allowed, err := h.limiter.Allow(ctx, c.IP()+"\x00"+strings.ToLower(form.Email))
	if err != nil {
		return err
	}
	if !allowed {
		h.log.WarnContext(ctx, "login rate limited", "ip", c.IP())
		c.Set(fiber.HeaderRetryAfter, "60")
		return fail(http.StatusTooManyRequests, "", "Too many login attempts for this address. Wait a minute and try again.")
	}
	user, err := h.store.GetUserByEmail(ctx, form.Email)
	hash := user.PasswordHash
	if errors.Is(err, store.ErrNotFound) {
		hash = h.dummyHash
	} else if err != nil {
		return err
	}
	ok, err := auth.VerifyPassword(hash, pw)
	if err != nil {
		return err
	}
	if !ok || user.ID == "" {
		return fail(http.StatusUnauthorized, "", "E-mail address or password is wrong.")
	}
	if err := h.startSession(c, user.ID, ""); err != nil {
		return err
	}
	return redirect(c, safeNext(form.Next))
}
