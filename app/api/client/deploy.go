package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/slipwayhq/slipway/app/api"
)

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// Format is "toml" (default) or "json".
	Format string
	Deploy bool
	// ExpectedRevision, when not nil, is sent as If-Match.
	ExpectedRevision *int64
}

// Apply submits a manifest document. A manifest that does not validate is
// an *Error with code manifest_validation_failed; ManifestErrors lists them.
func (c *Client) Apply(ctx context.Context, doc []byte, o ApplyOptions) (api.ApplyResponse, error) {
	var out api.ApplyResponse
	path := "/applications/apply"
	if o.Deploy {
		path += "?deploy=true"
	}
	h := http.Header{"Content-Type": {"application/toml"}}
	if o.Format == "json" {
		h.Set("Content-Type", "application/json")
	}
	if o.ExpectedRevision != nil {
		h.Set("If-Match", strconv.FormatInt(*o.ExpectedRevision, 10))
	}
	return out, c.send(ctx, http.MethodPost, path, h, bytes.NewReader(doc), &out)
}

// ManifestErrors returns the field errors of a manifest_validation_failed
// error, or nil.
func ManifestErrors(err error) []api.FieldError {
	e, ok := err.(*Error)
	if !ok || e.Code != "manifest_validation_failed" {
		return nil
	}
	raw, _ := json.Marshal(e.Details["errors"])
	var out []api.FieldError
	_ = json.Unmarshal(raw, &out)
	return out
}

// Deploy requests a deployment of an application's environment.
func (c *Client) Deploy(ctx context.Context, app, env string) (api.Deployment, error) {
	var d api.Deployment
	return d, c.Do(ctx, http.MethodPost, "/applications/"+url.PathEscape(app)+"/environments/"+url.PathEscape(env)+"/deploy", nil, &d)
}

// Deployment returns a deployment with its steps and events.
func (c *Client) Deployment(ctx context.Context, id string) (api.Deployment, error) {
	var d api.Deployment
	return d, c.Do(ctx, http.MethodGet, "/deployments/"+url.PathEscape(id), nil, &d)
}

// CancelDeployment stops a deployment that has not finished.
func (c *Client) CancelDeployment(ctx context.Context, id string) (api.Deployment, error) {
	var d api.Deployment
	return d, c.Do(ctx, http.MethodPost, "/deployments/"+url.PathEscape(id)+"/cancel", nil, &d)
}

// RestoreDeployment deploys an earlier deployment again.
func (c *Client) RestoreDeployment(ctx context.Context, id string) (api.Deployment, error) {
	var d api.Deployment
	return d, c.Do(ctx, http.MethodPost, "/deployments/"+url.PathEscape(id)+"/restore", nil, &d)
}

// Deployments lists an application's deployments, one environment's when
// env is not "".
func (c *Client) Deployments(ctx context.Context, app, env string) ([]api.Deployment, error) {
	var l api.DeploymentList
	path := "/applications/" + url.PathEscape(app) + "/deployments"
	if env != "" {
		path += "?env=" + url.QueryEscape(env)
	}
	return l.Deployments, c.Do(ctx, http.MethodGet, path, nil, &l)
}

// Environments lists an application's environments with their latest
// deployment.
func (c *Client) Environments(ctx context.Context, app string) ([]api.Environment, error) {
	var l api.EnvironmentList
	return l.Environments, c.Do(ctx, http.MethodGet, "/applications/"+url.PathEscape(app)+"/environments", nil, &l)
}

// Status reads an application's services live from Docker, one
// environment's when env is not "".
func (c *Client) Status(ctx context.Context, app, env string) (api.ApplicationStatus, error) {
	var s api.ApplicationStatus
	path := "/applications/" + url.PathEscape(app) + "/status"
	if env != "" {
		path += "?env=" + url.QueryEscape(env)
	}
	return s, c.Do(ctx, http.MethodGet, path, nil, &s)
}

// Manifest returns the application's current manifest revision.
func (c *Client) Manifest(ctx context.Context, app string) (api.Revision, error) {
	var r api.Revision
	return r, c.Do(ctx, http.MethodGet, "/applications/"+url.PathEscape(app)+"/manifest", nil, &r)
}

// send is Do for a body that is not JSON.
func (c *Client) send(ctx context.Context, method, path string, h http.Header, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+"/api/v1"+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	return c.roundTrip(req, out)
}
