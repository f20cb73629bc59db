package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
)

// DeleteApplication deletes an application (by id or name): the server
// tears down what runs for each environment and keeps named volumes.
func (c *Client) DeleteApplication(ctx context.Context, app string) error {
	return c.Do(ctx, http.MethodDelete, "/applications/"+url.PathEscape(app), nil, nil)
}

func servicePath(app, env, service string) string {
	return environmentPath(app, env) + "/services/" + url.PathEscape(service)
}

// RestartService queues a forced rolling update of a running service.
func (c *Client) RestartService(ctx context.Context, app, env, service string) error {
	return c.Do(ctx, http.MethodPost, servicePath(app, env, service)+"/restart", map[string]any{}, nil)
}

// ScaleService sets a service's replicas and deploys the environment.
func (c *Client) ScaleService(ctx context.Context, app, env, service string, replicas int64) (api.ServiceScaled, error) {
	var out api.ServiceScaled
	return out, c.Do(ctx, http.MethodPost, servicePath(app, env, service)+"/scale", api.ServiceScaleRequest{Replicas: replicas}, &out)
}
