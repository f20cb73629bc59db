package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/manifest"
)

func appPath(app string, parts ...string) string {
	p := "/applications/" + url.PathEscape(app)
	for _, s := range parts {
		p += "/" + url.PathEscape(s)
	}
	return p
}

// SetRoute adds or replaces the route named r.Name.
func (c *Client) SetRoute(ctx context.Context, app string, r manifest.Route, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPut, appPath(app, "routes", r.Name), r, o)
}

// RemoveRoute removes a route.
func (c *Client) RemoveRoute(ctx context.Context, app, name string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodDelete, appPath(app, "routes", name), nil, o)
}

// SetJob adds or replaces the job named j.Name.
func (c *Client) SetJob(ctx context.Context, app string, j manifest.Job, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPut, appPath(app, "jobs", j.Name), j, o)
}

// RemoveJob removes a job.
func (c *Client) RemoveJob(ctx context.Context, app, name string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodDelete, appPath(app, "jobs", name), nil, o)
}

// SetFile adds a file to a service or replaces the one at its target.
func (c *Client) SetFile(ctx context.Context, app, service string, f manifest.File, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPut, appPath(app, "services", service, "files"), f, o)
}

// RemoveFile removes the file a service mounts at target.
func (c *Client) RemoveFile(ctx context.Context, app, service, target string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodDelete, appPath(app, "services", service, "files")+"?target="+url.QueryEscape(target), nil, o)
}

// SetExport exports a service.
func (c *Client) SetExport(ctx context.Context, app, service string, req api.ExportSetRequest, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPut, appPath(app, "exports", service), req, o)
}

// RemoveExport stops exporting a service.
func (c *Client) RemoveExport(ctx context.Context, app, service string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodDelete, appPath(app, "exports", service), nil, o)
}

// SetImport imports another application's service.
func (c *Client) SetImport(ctx context.Context, app, from, service string, req api.ImportSetRequest, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPut, appPath(app, "imports", from, service), req, o)
}

// RemoveImport removes an import.
func (c *Client) RemoveImport(ctx context.Context, app, from, service string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodDelete, appPath(app, "imports", from, service), nil, o)
}

// SetVisibility sets an environment's visibility ("" removes it).
func (c *Client) SetVisibility(ctx context.Context, app, env, visibility string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPut, appPath(app, "environments", env, "visibility"), api.VisibilityRequest{Visibility: visibility}, o)
}

// SetRollback sets an environment's rollback policy ("" removes it).
func (c *Client) SetRollback(ctx context.Context, app, env, rollback string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPut, appPath(app, "environments", env, "rollback"), api.RollbackRequest{Rollback: rollback}, o)
}

// RenameApplication renames an application, keeping its identity.
func (c *Client) RenameApplication(ctx context.Context, app, name string, o EditOptions) (api.ApplicationRenamed, error) {
	h := http.Header{}
	if o.ExpectedRevision != nil {
		h.Set("If-Match", strconv.FormatInt(*o.ExpectedRevision, 10))
	}
	var out api.ApplicationRenamed
	return out, c.sendJSON(ctx, http.MethodPost, appPath(app, "rename"), h, api.ApplicationRenameRequest{Name: name}, &out)
}

// SetTelemetry grants or revokes an environment's telemetry.
func (c *Client) SetTelemetry(ctx context.Context, app, env string, granted bool) (api.EnvironmentTelemetry, error) {
	var out api.EnvironmentTelemetry
	return out, c.sendJSON(ctx, http.MethodPut, appPath(app, "environments", env, "telemetry"), http.Header{}, api.TelemetryRequest{Granted: granted}, &out)
}

// sendJSON sends in as a JSON body.
func (c *Client) sendJSON(ctx context.Context, method, path string, h http.Header, in, out any) error {
	var body bytes.Buffer
	if err := json.NewEncoder(&body).Encode(in); err != nil {
		return fmt.Errorf("%s %s: encode body: %w", method, path, err)
	}
	h.Set("Content-Type", "application/json")
	return c.send(ctx, method, path, h, &body, out)
}
