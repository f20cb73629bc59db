package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
)

// EnvironmentRoutes lists the routes an environment serves now.
func (c *Client) EnvironmentRoutes(ctx context.Context, app, env string) ([]api.EnvironmentRoute, error) {
	var l api.EnvironmentRouteList
	return l.Routes, c.Do(ctx, http.MethodGet, "/applications/"+url.PathEscape(app)+"/environments/"+url.PathEscape(env)+"/routes", nil, &l)
}
