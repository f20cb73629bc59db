package app

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

const (
	sessionCookie = "slipway_session"
	// preCSRFCookie carries the CSRF token of visitors without a session
	// (login, first run, invitation sign-up): a double-submit cookie.
	preCSRFCookie = "slipway_csrf"
	sessionTTL    = 14 * 24 * time.Hour
	// touchEvery bounds session writes: activity slides the expiry, but
	// not on every request.
	touchEvery = 10 * time.Minute
)

// visitor is what loadSession learns about the request.
type visitor struct {
	session store.Session // zero ID when signed out
	user    store.User
	teams   []store.MemberTeam
	current *store.MemberTeam // nil when the user has no team
	csrf    string
}

func (v *visitor) signedIn() bool { return v.session.ID != nil }

// actor is the member acting in the current team.
func (v *visitor) actor() service.Actor {
	a := service.Actor{UserID: v.user.ID}
	if v.current != nil {
		a.TeamID = v.current.Team.ID
		a.Scopes = auth.ScopesOf(auth.Role(v.current.Role))
	}
	return a
}

func (v *visitor) role() auth.Role {
	if v.current == nil {
		return ""
	}
	return auth.Role(v.current.Role)
}

const visitorKey = "visitor"

func visitorOf(c *fiber.Ctx) *visitor {
	v, _ := c.Locals(visitorKey).(*visitor)
	if v == nil {
		v = &visitor{}
	}
	return v
}

// loadSession resolves the session cookie into a visitor and picks its
// current team.
func (h *handler) loadSession(c *fiber.Ctx) error {
	ctx := c.UserContext()
	v := &visitor{}
	c.Locals(visitorKey, v)
	if secret := c.Cookies(sessionCookie); secret != "" {
		in, err := h.authCache.SignedIn(ctx, store.HashToken(secret), h.now())
		switch {
		case errors.Is(err, store.ErrNotFound):
			h.clearCookie(c, sessionCookie)
		case err != nil:
			return err
		default:
			if err := h.loadMember(c, v, in); err != nil {
				return err
			}
		}
	}
	if v.signedIn() {
		v.csrf = base64.RawURLEncoding.EncodeToString(v.session.CSRFSecret)
	} else if v.csrf = c.Cookies(preCSRFCookie); len(v.csrf) < 32 {
		v.csrf = auth.NewSecret("")
		h.setCookie(c, preCSRFCookie, v.csrf, time.Time{})
	}
	return c.Next()
}

// forgetAfterChange empties the auth cache and the team reads after every
// request that may change data (any method but GET, HEAD and OPTIONS),
// before its response leaves: a sign-out, a removed member or a revoked
// token is refused by this process from the next request on, and its pages
// show what the request changed, without waiting for Postgres's
// notifications (which other serve processes act on).
func (h *handler) forgetAfterChange(c *fiber.Ctx) error {
	err := c.Next()
	if !safeMethod(c.Method()) {
		h.authCache.Forget()
		h.teamReads.Forget("")
	}
	return err
}

func (h *handler) loadMember(c *fiber.Ctx, v *visitor, in store.SignedIn) error {
	ctx := c.UserContext()
	sess, teams := in.Session, in.Teams
	v.session, v.user, v.teams = sess, in.User, teams
	for i := range teams {
		if teams[i].Team.ID == sess.CurrentTeamID {
			v.current = &teams[i]
		}
	}
	if v.current == nil && len(teams) > 0 {
		// The session's team was removed (or never set): fall back to the
		// first team so the user lands somewhere they belong.
		v.current = &teams[0]
		if err := h.store.SetSessionTeam(ctx, sess.ID, teams[0].Team.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	if now := h.now(); now.Sub(sess.LastSeenAt) > touchEvery {
		if err := h.store.TouchSession(ctx, sess.ID, now.Add(sessionTTL)); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		h.authCache.SessionTouched(sess.ID, now, now.Add(sessionTTL))
	}
	return nil
}

// startSession signs the user in: a fresh cookie (never reuse one set before
// login, which would allow session fixation) and a fresh CSRF secret.
func (h *handler) startSession(c *fiber.Ctx, userID, teamID string) error {
	secret := auth.NewSecret("")
	csrf := make([]byte, 32)
	_, _ = rand.Read(csrf)
	_, err := h.store.CreateSession(c.UserContext(), store.Session{
		ID: store.HashToken(secret), UserID: userID, CurrentTeamID: teamID, CSRFSecret: csrf,
		ExpiresAt: h.now().Add(sessionTTL),
	})
	if err != nil {
		return fmt.Errorf("start session: %w", err)
	}
	h.setCookie(c, sessionCookie, secret, h.now().Add(sessionTTL))
	h.clearCookie(c, preCSRFCookie)
	return nil
}

func (h *handler) setCookie(c *fiber.Ctx, name, value string, expires time.Time) {
	c.Cookie(&fiber.Cookie{
		Name: name, Value: value, Path: "/", Expires: expires,
		HTTPOnly: true, Secure: h.secure || c.Protocol() == "https", SameSite: fiber.CookieSameSiteLaxMode,
	})
}

func (h *handler) clearCookie(c *fiber.Ctx, name string) {
	c.Cookie(&fiber.Cookie{
		Name: name, Value: "", Path: "/", Expires: time.Unix(1, 0), MaxAge: -1,
		HTTPOnly: true, Secure: h.secure || c.Protocol() == "https", SameSite: fiber.CookieSameSiteLaxMode,
	})
}

// requireUser sends signed-out visitors to the login page.
func (h *handler) requireUser(c *fiber.Ctx) error {
	if !visitorOf(c).signedIn() {
		return redirect(c, "/login?next="+c.OriginalURL())
	}
	return c.Next()
}

// requireTeam also needs a current team.
func (h *handler) requireTeam(c *fiber.Ctx) error {
	v := visitorOf(c)
	if !v.signedIn() {
		return redirect(c, "/login?next="+c.OriginalURL())
	}
	if v.current == nil {
		return redirect(c, "/account")
	}
	return c.Next()
}

// requireScope needs the current member's role to grant scope.
func (h *handler) requireScope(scope auth.Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		v := visitorOf(c)
		if !v.signedIn() || v.current == nil {
			return h.requireTeam(c)
		}
		if !v.role().Has(scope) {
			return fiber.NewError(http.StatusForbidden, fmt.Sprintf("Your role (%s) does not allow this: it needs the %s permission.", v.role(), scope))
		}
		return c.Next()
	}
}

// redirect answers a form post with 303, or tells htmx to navigate.
func redirect(c *fiber.Ctx, to string) error {
	if c.Get("HX-Request") == "true" {
		c.Set("HX-Redirect", to)
		return c.SendStatus(http.StatusNoContent)
	}
	return c.Redirect(to, http.StatusSeeOther)
}
