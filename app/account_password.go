package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// accountPassword changes the visitor's password: the current one is
// required (and rate limited like a login), the new one is hashed with
// argon2id, every other session of the user ends, and each of the user's
// teams records account.password_change in its audit log.
func (h *handler) accountPassword(c *fiber.Ctx) error {
	v := visitorOf(c)
	ctx := c.UserContext()
	current, next := c.FormValue("current_password"), c.FormValue("new_password")
	refuse := func(status int, field, msg string) error {
		av := accountView(v)
		av.Errors = map[string]string{field: msg}
		return h.render(c, status, "Account", page.Account(av))
	}
	if current == "" {
		return refuse(http.StatusUnprocessableEntity, "current_password", "enter your current password")
	}
	allowed, err := h.limiter.Allow(ctx, "password\x00"+v.user.ID)
	if err != nil {
		return err
	}
	if !allowed {
		c.Set(fiber.HeaderRetryAfter, "60")
		return refuse(http.StatusTooManyRequests, "password", "Too many attempts. Wait a minute and try again.")
	}
	if len(current) > auth.MaxPasswordBytes {
		return refuse(http.StatusUnauthorized, "current_password", "the current password is wrong")
	}
	ok, err := auth.VerifyPassword(v.user.PasswordHash, current)
	if err != nil {
		return err
	}
	if !ok {
		return refuse(http.StatusUnauthorized, "current_password", "the current password is wrong")
	}
	if err := auth.CheckPassword(next); err != nil {
		return refuse(http.StatusUnprocessableEntity, "new_password", err.Error())
	}
	hash, err := auth.HashPassword(h.argon, next)
	if err != nil {
		return err
	}
	err = h.store.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.UpdateUserPassword(ctx, v.user.ID, hash); err != nil {
			return err
		}
		if _, err := tx.DeleteUserSessions(ctx, v.user.ID, v.session.ID); err != nil {
			return err
		}
		for _, t := range v.teams {
			if _, err := tx.RecordEvent(ctx, t.Team.ID, store.EventParams{Actor: "user:" + v.user.ID, Verb: "account.password_change", ObjectType: "user", ObjectID: v.user.ID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	av := accountView(v)
	av.Notice = "Password changed. Your other sessions were signed out."
	return h.render(c, http.StatusOK, "Account", page.Account(av))
}
