package api

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// TokenCreateRequest is the body of POST /tokens.
type TokenCreateRequest struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
	// ExpiresInSeconds is 0 for a token that does not expire.
	ExpiresInSeconds int64 `json:"expires_in_seconds"`
}

// CreatedToken is a new token with its secret.
type CreatedToken struct {
	Token
	// Secret is the token itself, returned only here.
	Secret string `json:"token"`
}

// tokenCreate makes a token with a subset of the calling token's scopes.
func (h *handler) tokenCreate(c *fiber.Ctx) error {
	var req TokenCreateRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	tok, secret, err := service.CreateToken(c.UserContext(), h.store, callerOf(c).actor(), service.TokenRequest{
		Name: req.Name, Scopes: req.Scopes, ExpiresIn: time.Duration(req.ExpiresInSeconds) * time.Second,
	}, h.now())
	if err != nil {
		return h.fail(c, err)
	}
	return c.Status(http.StatusCreated).JSON(CreatedToken{Token: newToken(tok), Secret: secret})
}
