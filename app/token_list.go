package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/views/component"
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
	for _, s := range auth.ScopesOf(v.role()) {
		tv.ScopeHelp = append(tv.ScopeHelp, component.Meaning{Term: string(s), Text: s.Meaning()})
	}
	now := h.now()
	for _, t := range toks {
		tv.Tokens = append(tv.Tokens, page.TokenRow{ID: t.ID, Name: t.Name, Scopes: t.Scopes, Created: when(&t.CreatedAt), LastUsed: when(t.LastUsedAt),
			Expires: when(t.ExpiresAt), Expired: t.ExpiresAt != nil && !t.ExpiresAt.After(now)})
	}
	return tv, nil
}
