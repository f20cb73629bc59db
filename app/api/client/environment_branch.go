package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
)

// SetEnvironmentBranch sets the branch (and optional pinned commit) an
// environment of a repository-backed application reads.
func (c *Client) SetEnvironmentBranch(ctx context.Context, app, env string, req api.BranchRequest) (api.EnvironmentBranch, error) {
	var out api.EnvironmentBranch
	return out, c.Do(ctx, http.MethodPut, environmentPath(app, env)+"/branch", req, &out)
}

// SetEnvironmentSync turns an environment's sync on or off.
func (c *Client) SetEnvironmentSync(ctx context.Context, app, env string, on bool) (api.EnvironmentSync, error) {
	var out api.EnvironmentSync
	return out, c.Do(ctx, http.MethodPut, environmentPath(app, env)+"/sync", api.SyncRequest{Sync: on}, &out)
}

// DeployRef requests a deployment that reads a one-off branch or commit.
func (c *Client) DeployRef(ctx context.Context, app, env string, req api.DeployRequest) (api.Deployment, error) {
	var d api.Deployment
	return d, c.Do(ctx, http.MethodPost, environmentPath(app, env)+"/deploy", req, &d)
}

// ResetToRepository makes the manifest last read from the application's
// repository its saved manifest again.
func (c *Client) ResetToRepository(ctx context.Context, app string) (api.RepositoryReset, error) {
	var out api.RepositoryReset
	return out, c.Do(ctx, http.MethodPost, "/applications/"+url.PathEscape(app)+"/repository/reset", nil, &out)
}
