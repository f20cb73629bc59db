package api

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// TokenList is GET /tokens.
type TokenList struct {
	Tokens []Token `json:"tokens"`
}

// Token is an API token without its secret.
type Token struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
}

func newToken(t store.APIToken) Token {
	return Token{ID: t.ID, Name: t.Name, Scopes: t.Scopes, CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt, ExpiresAt: t.ExpiresAt}
}

func (h *handler) tokenList(c *fiber.Ctx) error {
	toks, err := h.store.ListAPITokens(c.UserContext(), callerOf(c).token.TeamID)
	if err != nil {
		return h.fail(c, err)
	}
	out := make([]Token, len(toks))
	for i, t := range toks {
		out[i] = newToken(t)
	}
	return c.JSON(TokenList{Tokens: out})
}
