package client

import (
	"context"
	"net/http"

	"github.com/slipwayhq/slipway/app/api"
)

// CreateEnvironment creates an environment the manifest does not declare;
// nothing is deployed.
func (c *Client) CreateEnvironment(ctx context.Context, app string, req api.EnvironmentCreateRequest) (api.EnvironmentCreated, error) {
	var out api.EnvironmentCreated
	return out, c.Do(ctx, http.MethodPost, appPath(app, "environments"), req, &out)
}

// RenameEnvironment renames an environment the manifest does not declare,
// keeping what runs for it.
func (c *Client) RenameEnvironment(ctx context.Context, app, env, name string) (api.EnvironmentRenamed, error) {
	var out api.EnvironmentRenamed
	return out, c.Do(ctx, http.MethodPost, environmentPath(app, env)+"/rename", api.EnvironmentRenameRequest{Name: name}, &out)
}
