package api

import (
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store"
)

// EnvironmentRoute is a route an environment serves now (what its last
// successful deployment activated on the gateway).
type EnvironmentRoute struct {
	Hostname   string `json:"hostname"`
	Wildcard   bool   `json:"wildcard"`
	Visibility string `json:"visibility"`
	// URL is where the route answers: https once it has a certificate
	// browsers trust (the gateway then redirects http to it); empty for a
	// wildcard. Private routes answer only on the gateway's private listener.
	URL          string         `json:"url,omitempty"`
	Service      string         `json:"service,omitempty"`
	Port         int            `json:"port,omitempty"`
	Redirect     *RouteRedirect `json:"redirect,omitempty"`
	Certificate  RouteTLS       `json:"certificate"`
	DeploymentID string         `json:"deployment_id"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

// RouteTLS is a route's HTTPS certificate as the gateway last reported it.
type RouteTLS struct {
	// State is unknown (the gateway has not reported it yet), none
	// (plain HTTP only: private routes, or no certificate source), pending
	// (ACME is obtaining one), issued (by ACME, see ExpiresAt), failed (ACME
	// keeps retrying, see LastError), operator (the operator's own
	// certificate, how wildcards get HTTPS) or internal (the dev CA).
	State     string     `json:"state"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// LastError is the last ACME failure (also set when an issued
	// certificate's renewal fails).
	LastError string `json:"last_error,omitempty"`
	// UpdatedAt is when the state last changed.
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// certificateUnknown is the state of a route the gateway has not reported.
const certificateUnknown = "unknown"

// routeTLS converts a stored certificate state; ok is false when none was
// reported for the hostname.
func routeTLS(c store.RouteCertificate, ok bool) RouteTLS {
	if !ok {
		return RouteTLS{State: certificateUnknown}
	}
	return RouteTLS{State: c.State, ExpiresAt: c.ExpiresAt, LastError: c.LastError, UpdatedAt: &c.UpdatedAt}
}

// trusted says whether browsers trust the route's certificate, which is
// when the gateway serves it over https and redirects http there.
func (t RouteTLS) trusted() bool {
	return t.State == "issued" || t.State == "operator"
}

// RouteRedirect is a route the gateway answers with a redirect.
type RouteRedirect struct {
	To           string `json:"to"`
	Status       int    `json:"status"`
	PreservePath bool   `json:"preserve_path"`
}

// EnvironmentRouteList is GET /applications/{app}/environments/{env}/routes.
type EnvironmentRouteList struct {
	Routes []EnvironmentRoute `json:"routes"`
}

// registerRoutes mounts the routes and links endpoints of environments
// and of previews (an environment's never reach a preview).
func (h *handler) registerRoutes(r fiber.Router) {
	r.Get("/applications/:app/environments/:env/routes", h.requireScope(auth.AppsRead), h.environmentRoutes(h.namedEnvironment))
	r.Get("/applications/:app/environments/:env/links", h.requireScope(auth.AppsRead), h.environmentLinks(h.namedEnvironment))
	r.Get("/applications/:app/previews/:slug/routes", h.requireScope(auth.AppsRead), h.environmentRoutes(h.namedPreview))
	r.Get("/applications/:app/previews/:slug/links", h.requireScope(auth.AppsRead), h.environmentLinks(h.namedPreview))
}

// environmentRoutes lists the routes the environment or preview target
// resolves serves now.
func (h *handler) environmentRoutes(target targetOf) fiber.Handler {
	return func(c *fiber.Ctx) error { return h.routesOf(c, target) }
}

func (h *handler) routesOf(c *fiber.Ctx, target targetOf) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	env, err := target(c, a)
	if err != nil {
		return h.fail(c, err)
	}
	routes, err := h.store.ListEnvironmentRoutes(ctx, team, env.ID)
	if err != nil {
		return h.fail(c, err)
	}
	certs, err := h.store.ListEnvironmentCertificates(ctx, team, env.ID)
	if err != nil {
		return h.fail(c, err)
	}
	out := EnvironmentRouteList{Routes: make([]EnvironmentRoute, 0, len(routes))}
	for _, r := range routes {
		cert, reported := certs[r.Hostname]
		er := EnvironmentRoute{
			Hostname: r.Hostname, Wildcard: r.Wildcard, Visibility: r.Visibility,
			Certificate:  routeTLS(cert, reported),
			DeploymentID: r.DeploymentID, UpdatedAt: r.UpdatedAt,
		}
		if !r.Wildcard {
			scheme := "http"
			if er.Certificate.trusted() {
				// The gateway redirects http to https for these.
				scheme = "https"
			}
			er.URL = (&url.URL{Scheme: scheme, Host: r.Hostname, Path: "/"}).String()
		}
		if r.RedirectTo != "" {
			status := r.RedirectStatus
			if status == 0 {
				status = 308
			}
			er.Redirect = &RouteRedirect{To: r.RedirectTo, Status: status, PreservePath: r.PreservePath}
		} else {
			er.Service, er.Port = r.Service, r.BackendPort
		}
		out.Routes = append(out.Routes, er)
	}
	return c.JSON(out)
}
