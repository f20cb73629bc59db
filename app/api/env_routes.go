package api

import (
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
)

// EnvironmentRoute is a route an environment serves now (what its last
// successful deployment activated on the gateway).
type EnvironmentRoute struct {
	Hostname   string `json:"hostname"`
	Wildcard   bool   `json:"wildcard"`
	Visibility string `json:"visibility"`
	// URL is where the route answers; empty for a wildcard. Private routes
	// answer only on the gateway's private listener.
	URL          string         `json:"url,omitempty"`
	Service      string         `json:"service,omitempty"`
	Port         int            `json:"port,omitempty"`
	Redirect     *RouteRedirect `json:"redirect,omitempty"`
	DeploymentID string         `json:"deployment_id"`
	UpdatedAt    time.Time      `json:"updated_at"`
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

// registerRoutes mounts the environment routes endpoint.
func (h *handler) registerRoutes(r fiber.Router) {
	r.Get("/applications/:app/environments/:env/routes", h.requireScope(auth.AppsRead), h.environmentRoutes)
}

func (h *handler) environmentRoutes(c *fiber.Ctx) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	env, err := h.store.GetEnvironmentByName(ctx, team, a.ID, c.Params("env"))
	if err != nil {
		return h.fail(c, err)
	}
	routes, err := h.store.ListEnvironmentRoutes(ctx, team, env.ID)
	if err != nil {
		return h.fail(c, err)
	}
	out := EnvironmentRouteList{Routes: make([]EnvironmentRoute, 0, len(routes))}
	for _, r := range routes {
		er := EnvironmentRoute{
			Hostname: r.Hostname, Wildcard: r.Wildcard, Visibility: r.Visibility,
			DeploymentID: r.DeploymentID, UpdatedAt: r.UpdatedAt,
		}
		if !r.Wildcard {
			// https once certificates are tracked here; the gateway
			// redirects http to https for routes that have one.
			er.URL = (&url.URL{Scheme: "http", Host: r.Hostname, Path: "/"}).String()
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
