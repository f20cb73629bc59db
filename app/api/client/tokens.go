package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
)

// Tokens lists the team's API tokens (never their secrets).
func (c *Client) Tokens(ctx context.Context) (api.TokenList, error) {
	var out api.TokenList
	return out, c.Do(ctx, http.MethodGet, "/tokens", nil, &out)
}

// CreateToken makes a token with some of the caller's scopes; its secret
// is in the answer only.
func (c *Client) CreateToken(ctx context.Context, req api.TokenCreateRequest) (api.CreatedToken, error) {
	var out api.CreatedToken
	return out, c.Do(ctx, http.MethodPost, "/tokens", req, &out)
}

// RevokeToken revokes a token by id.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/tokens/"+url.PathEscape(id), nil, nil)
}
