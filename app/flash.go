package app

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views"
)

// A flash is the one-line answer to a save, deploy, create or delete: what
// happened and, with a link, what to do next. A handler calls setFlash
// before it redirects (post-redirect-get: the next page shows it once) or
// renders; an htmx fragment gets it swapped in out of band.
const (
	flashCookie = "slipway_flash"
	flashLocal  = "flash"
)

// setFlash records the message for this response and, for the page a
// redirect leads to, in a cookie signed with the session's CSRF secret (so
// nobody else can put words on the dashboard).
func (h *handler) setFlash(c *fiber.Ctx, f views.Flash) {
	c.Locals(flashLocal, &f)
	v := visitorOf(c)
	if !v.signedIn() {
		return
	}
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	payload := base64.RawURLEncoding.EncodeToString(b)
	h.setCookie(c, flashCookie, payload+"."+flashMAC(v.session.CSRFSecret, payload), h.now().Add(time.Minute))
}

// flashOK is the common success flash.
func (h *handler) flashOK(c *fiber.Ctx, message string) {
	h.setFlash(c, views.Flash{Kind: "ok", Message: message})
}

// takeFlash returns the flash to show on this page and forgets it: the one
// set while handling this request, else the one a redirect left behind.
func (h *handler) takeFlash(c *fiber.Ctx) *views.Flash {
	if f, ok := c.Locals(flashLocal).(*views.Flash); ok {
		c.Locals(flashLocal, nil)
		// Shown now: the cookie setFlash wrote must not show it again.
		c.Response().Header.DelCookie(flashCookie)
		if c.Cookies(flashCookie) != "" {
			h.clearCookie(c, flashCookie)
		}
		return f
	}
	raw := c.Cookies(flashCookie)
	if raw == "" {
		return nil
	}
	h.clearCookie(c, flashCookie)
	v := visitorOf(c)
	payload, mac, ok := strings.Cut(raw, ".")
	if !ok || !v.signedIn() || !hmac.Equal([]byte(mac), []byte(flashMAC(v.session.CSRFSecret, payload))) {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return nil
	}
	var f views.Flash
	if json.Unmarshal(b, &f) != nil || f.Message == "" {
		return nil
	}
	return &f
}

func flashMAC(secret []byte, payload string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("flash:" + payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// done finishes a form post that worked: a plain post is redirected to to
// (post-redirect-get) with message as the flash; an htmx request gets
// show's answer, which puts message beside the form it answers.
func (h *handler) done(c *fiber.Ctx, message, to string, show func(notice string) error) error {
	if !isFragment(c) || show == nil {
		h.flashOK(c, message)
		return redirect(c, to)
	}
	return show(message)
}
