package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/views/page"
)

func (h *handler) tokenList(c *fiber.Ctx) error {
	tv, err := h.tokensView(c)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "API tokens", page.Tokens(tv))
}

func (h *handler) tokensView(c *fiber.Ctx) (page.TokensView, error) {
	v := visitorOf(c)
	toks, err := h.store.ListAPITokens(c.UserContext(), v.current.Team.ID)
	if err != nil {
		return page.TokensView{}, err
	}
	tv := page.TokensView{Available: auth.Strings(auth.ScopesOf(v.role())), Checked: map[string]bool{}}
	for _, t := range toks {
		tv.Tokens = append(tv.Tokens, page.TokenRow{ID: t.ID, Name: t.Name, Scopes: t.Scopes, Created: when(&t.CreatedAt), LastUsed: when(t.LastUsedAt), Expires: when(t.ExpiresAt)})
	}
	return tv, nil
}
