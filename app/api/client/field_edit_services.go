package client

import (
	"context"
	"net/http"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/manifest"
)

// AddService adds a service; one of that name already there fails with
// service_name_taken.
func (c *Client) AddService(ctx context.Context, app string, s manifest.Service, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPost, appPath(app, "services"), s, o)
}

// RemoveService removes a service no job, route or export names.
func (c *Client) RemoveService(ctx context.Context, app, service string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodDelete, appPath(app, "services", service), nil, o)
}

// DeclareSecret declares the generated secret d.Name, or replaces its
// declaration.
func (c *Client) DeclareSecret(ctx context.Context, app string, d manifest.SecretDeclaration, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPut, appPath(app, "generated-secrets", d.Name), d, o)
}

// UndeclareSecret removes a generated-secret declaration no service or job
// mounts.
func (c *Client) UndeclareSecret(ctx context.Context, app, name string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodDelete, appPath(app, "generated-secrets", name), nil, o)
}
