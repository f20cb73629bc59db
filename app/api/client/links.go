package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
)

// EnvironmentLinks lists an environment's imports (connected or why not)
// and the environments importing its services.
func (c *Client) EnvironmentLinks(ctx context.Context, app, env string) (api.EnvironmentLinks, error) {
	var l api.EnvironmentLinks
	return l, c.Do(ctx, http.MethodGet, "/applications/"+url.PathEscape(app)+"/environments/"+url.PathEscape(env)+"/links", nil, &l)
}
