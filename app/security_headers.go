package app

import (
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// contentSecurityPolicy allows only the dashboard's own scripts and
// styles: no inline script, no inline style (htmx's indicator styles ship
// in slipway.css, see the htmx-config meta tag in views/layout), no eval,
// no plugins, and no framing by any site (clickjacking on the deploy and
// delete forms). Forms post to this origin only, plus formActions.
func contentSecurityPolicy(formActions []string) string {
	forms := append([]string{"'self'"}, formActions...)
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self' data:",
		"font-src 'self'",
		"connect-src 'self'",
		"manifest-src 'self'",
		"form-action " + strings.Join(forms, " "),
		"base-uri 'none'",
		"object-src 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

// hstsValue is a year. No includeSubDomains: applications served under
// the dashboard's domain may still answer plain HTTP.
const hstsValue = "max-age=31536000"

// securityHeaders is the first middleware of every response: the CSP
// above, no framing for browsers without frame-ancestors, no MIME
// sniffing, no dashboard URLs (which contain ids) in Referer headers sent
// elsewhere, and HSTS once the request came over HTTPS (or the operator
// said a TLS proxy is in front: secure_cookies).
func (h *handler) securityHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentSecurityPolicy, h.csp)
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	if h.behindHTTPS(c) {
		c.Set(fiber.HeaderStrictTransportSecurity, hstsValue)
	}
	return c.Next()
}

// behindHTTPS says whether the browser reached us over HTTPS: TLS here,
// or a TLS-terminating proxy (secure_cookies, or X-Forwarded-Proto).
func (h *handler) behindHTTPS(c *fiber.Ctx) bool {
	return h.secure || c.Protocol() == "https"
}

// originOf is the scheme://host of a URL, or "" when it has none.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
