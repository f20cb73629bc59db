package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/slipwayhq/slipway/app/api"
)

// EditOptions tune a field edit.
type EditOptions struct {
	// Env names the environment a variable edit applies to ("" for the
	// application's default).
	Env    string
	Deploy bool
	// ExpectedRevision, when not nil, is sent as If-Match: the edit fails
	// with generation_conflict if another revision was saved since.
	ExpectedRevision *int64
	// IdempotencyKey, when set, makes the request safe to repeat.
	IdempotencyKey string
}

// SetVariable sets a variable to value (a string, int64 or bool).
func (c *Client) SetVariable(ctx context.Context, app, name string, value any, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPut, "/applications/"+url.PathEscape(app)+"/variables/"+url.PathEscape(name), map[string]any{"value": value}, o)
}

// UnsetVariable removes a variable.
func (c *Client) UnsetVariable(ctx context.Context, app, name string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodDelete, "/applications/"+url.PathEscape(app)+"/variables/"+url.PathEscape(name), nil, o)
}

// UpdateService changes a service's replicas, image or environment.
func (c *Client) UpdateService(ctx context.Context, app, service string, req api.ServiceUpdateRequest, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPatch, "/applications/"+url.PathEscape(app)+"/services/"+url.PathEscape(service), req, o)
}

// RenameService renames a service and what refers to it.
func (c *Client) RenameService(ctx context.Context, app, service, name string, o EditOptions) (api.FieldEditResponse, error) {
	return c.edit(ctx, http.MethodPost, "/applications/"+url.PathEscape(app)+"/services/"+url.PathEscape(service)+"/rename",
		api.ServiceRenameRequest{Name: name}, o)
}

func (c *Client) edit(ctx context.Context, method, path string, in any, o EditOptions) (api.FieldEditResponse, error) {
	q := url.Values{}
	if o.Env != "" {
		q.Set("env", o.Env)
	}
	if o.Deploy {
		q.Set("deploy", "true")
	}
	if len(q) > 0 {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + q.Encode()
	}
	h := http.Header{}
	if o.ExpectedRevision != nil {
		h.Set("If-Match", strconv.FormatInt(*o.ExpectedRevision, 10))
	}
	if o.IdempotencyKey != "" {
		h.Set(api.IdempotencyKeyHeader, o.IdempotencyKey)
	}
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return api.FieldEditResponse{}, fmt.Errorf("%s %s: encode body: %w", method, path, err)
		}
		h.Set("Content-Type", "application/json")
	}
	var out api.FieldEditResponse
	return out, c.send(ctx, method, path, h, &body, &out)
}
