package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/app/api"
)

// Environment variables the CLI reads.
const (
	EnvURL   = "SLIPWAY_URL"
	EnvToken = "SLIPWAY_TOKEN"
)

// Client calls one Slipway's API with one token.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// New returns a client for baseURL (e.g. http://127.0.0.1:8080).
func New(baseURL, token string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: %q is not an http(s) URL like http://127.0.0.1:8080", EnvURL, baseURL)
	}
	if token == "" {
		return nil, fmt.Errorf("%s is empty: create a token on the dashboard's API tokens page", EnvToken)
	}
	return &Client{base: u, token: token, http: &http.Client{Timeout: 60 * time.Second}}, nil
}

// FromEnv builds a client from SLIPWAY_URL and SLIPWAY_TOKEN.
func FromEnv() (*Client, error) {
	base := os.Getenv(EnvURL)
	if base == "" {
		return nil, fmt.Errorf("%s is not set: export %s=http://127.0.0.1:8080 (where slipway serve or dev listens)", EnvURL, EnvURL)
	}
	return New(base, os.Getenv(EnvToken))
}

// Error is an API error response.
type Error struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Code, e.Status)
	if p, ok := e.Details["permission"]; ok {
		msg += fmt.Sprintf("; needs %v", p)
	}
	return msg
}

// Do sends in (JSON, unless nil) and decodes the response into out (unless
// nil). A non-2xx answer is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+"/api/v1"+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.roundTrip(req, out)
}

// roundTrip authenticates req, sends it and decodes the answer into out
// (unless nil); a non-2xx answer is an *Error.
func (c *Client) roundTrip(req *http.Request, out any) error {
	method, path := req.Method, req.URL.Path
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read: %w", method, path, err)
	}
	if res.StatusCode >= 300 {
		return responseError(res.StatusCode, raw)
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decode response: %w", method, path, err)
	}
	return nil
}

// responseError is the *Error of a non-2xx answer with body raw.
func responseError(status int, raw []byte) *Error {
	var body api.Error
	if json.Unmarshal(raw, &body) != nil || body.Code == "" {
		body.Code, body.Message = "http_error", strings.TrimSpace(string(raw))
	}
	return &Error{Status: status, Code: body.Code, Message: body.Message, Details: body.Details}
}

// Me says who the token acts for.
func (c *Client) Me(ctx context.Context) (api.Me, error) {
	var me api.Me
	return me, c.Do(ctx, http.MethodGet, "/me", nil, &me)
}

// Applications lists the team's applications.
func (c *Client) Applications(ctx context.Context) ([]api.Application, error) {
	var l api.ApplicationList
	return l.Applications, c.Do(ctx, http.MethodGet, "/applications", nil, &l)
}

// CreateApplication creates an empty application.
func (c *Client) CreateApplication(ctx context.Context, name string) (api.Application, error) {
	var a api.Application
	return a, c.Do(ctx, http.MethodPost, "/applications", api.ApplicationCreateRequest{Name: name}, &a)
}

// IsNotFound reports whether err is the API's 404.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// Nodes lists the Swarm's nodes (installation admins only).
func (c *Client) Nodes(ctx context.Context) ([]api.Node, error) {
	var l api.NodeList
	return l.Nodes, c.Do(ctx, http.MethodGet, "/nodes", nil, &l)
}
