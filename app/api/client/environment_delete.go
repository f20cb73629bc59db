package client

import (
	"context"
	"net/http"

	"github.com/slipwayhq/slipway/app/api"
)

// DeleteEnvironment deletes an environment; the server tears down what
// runs for it and keeps its named volumes.
func (c *Client) DeleteEnvironment(ctx context.Context, app, env string) (api.EnvironmentDeleted, error) {
	var out api.EnvironmentDeleted
	return out, c.Do(ctx, http.MethodDelete, environmentPath(app, env), nil, &out)
}
