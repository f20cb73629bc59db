package app

import (
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/views"
	"github.com/slipwayhq/slipway/views/component"
	"github.com/slipwayhq/slipway/views/layout"
	"github.com/slipwayhq/slipway/views/page"
)

// render writes component with status: the whole page in its shell, or just
// the component when htmx asks for a fragment (HX-Request without a boost,
// since a boosted link expects a whole page).
func (h *handler) render(c *fiber.Ctx, status int, title string, body templ.Component) error {
	v := visitorOf(c)
	ctx := views.WithRequest(c.UserContext(), h.viewRequest(c, v))
	out := body
	if c.Get("HX-Request") != "true" || c.Get("HX-Boosted") == "true" {
		if v.current != nil {
			ctx = views.WithRequest(ctx, withFlash(views.From(ctx), h.takeFlash(c)))
			out = layout.App(title, body)
		} else {
			out = layout.Bare(title, body)
		}
	} else if f := h.takeFlash(c); f != nil {
		// A fragment answer carries the flash out of band into the page's region.
		out = templ.Join(body, component.Flash(f, true))
	}
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	// Pages carry CSRF tokens and team data: never cache them.
	c.Set(fiber.HeaderCacheControl, "no-store")
	return out.Render(ctx, c.Response().BodyWriter())
}

func (h *handler) viewRequest(c *fiber.Ctx, v *visitor) views.Request {
	r := views.Request{CSRF: v.csrf, UserEmail: v.user.Email, Path: c.Path(), Scopes: map[string]bool{}, PublicURL: h.publicURL(c), InstallationAdmin: v.user.InstallationAdmin}
	for _, t := range v.teams {
		r.Teams = append(r.Teams, views.TeamRef{ID: t.Team.ID, Name: t.Team.Name, Role: string(t.Role)})
	}
	if v.current != nil {
		r.Team = views.TeamRef{ID: v.current.Team.ID, Name: v.current.Team.Name, Role: string(v.current.Role)}
		for _, s := range auth.ScopesOf(v.role()) {
			r.Scopes[string(s)] = true
		}
	}
	return r
}

func withFlash(r views.Request, f *views.Flash) views.Request {
	r.Flash = f
	return r
}

// publicURL is the configured public address, else the request's own.
func (h *handler) publicURL(c *fiber.Ctx) string {
	if h.public != "" {
		return strings.TrimSuffix(h.public, "/")
	}
	return c.BaseURL()
}

// renderError shows an error page (or fragment) with a snake_case code.
func (h *handler) renderError(c *fiber.Ctx, status int, code, message string) error {
	if c.Locals(visitorKey) == nil {
		// Errors raised before loadSession ran (unknown static file, body
		// too large) render signed-out.
		c.Locals(visitorKey, &visitor{})
	}
	return h.render(c, status, "Error", page.Error(status, code, message))
}

// renderFragmentError answers an htmx form post that failed (a role that
// no longer allows the form, a page that is gone) with its message in the
// page's message area, out of band, leaving the form's target as it was:
// htmx drops a 4xx or 5xx answer unless dashboard.js sees the
// X-Slipway-Error header and lets it swap.
func (h *handler) renderFragmentError(c *fiber.Ctx, status int, code, message string) error {
	c.Set("HX-Reswap", "none")
	c.Set("X-Slipway-Error", code)
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	ctx := views.WithRequest(c.UserContext(), views.Request{})
	return component.Flash(&views.Flash{Kind: "error", Message: message + " (" + code + ")"}, true).Render(ctx, c.Response().BodyWriter())
}

func isAPI(c *fiber.Ctx) bool { return strings.HasPrefix(c.Path(), "/api/") }

// when formats a time for tables; UTC keeps server and tests in agreement.
func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
