package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
)

func environmentPath(app, env string) string {
	return "/applications/" + url.PathEscape(app) + "/environments/" + url.PathEscape(env)
}

// Promote plans or requests a promotion of an environment. A refusal is an
// *Error whose Details["problems"] lists every precondition that failed.
func (c *Client) Promote(ctx context.Context, app, env string, req api.PromoteRequest) (api.PromoteResponse, error) {
	var out api.PromoteResponse
	return out, c.Do(ctx, http.MethodPost, environmentPath(app, env)+"/promote", req, &out)
}

// SetEnvironmentSource changes where an undeclared environment deploys from.
func (c *Client) SetEnvironmentSource(ctx context.Context, app, env string, req api.SourceRequest) (api.EnvironmentSource, error) {
	var out api.EnvironmentSource
	return out, c.Do(ctx, http.MethodPut, environmentPath(app, env)+"/source", req, &out)
}

// Releases lists an application's releases, newest first.
func (c *Client) Releases(ctx context.Context, app string) (api.ReleaseList, error) {
	var out api.ReleaseList
	return out, c.Do(ctx, http.MethodGet, "/applications/"+url.PathEscape(app)+"/releases", nil, &out)
}
