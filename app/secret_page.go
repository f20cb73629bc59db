package app

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// secretsPage builds the Secrets tab from metadata only: the service has no
// method that returns a value to these handlers.
func (h *handler) secretsPage(c *fiber.Ctx, a store.Application) (page.SecretsView, error) {
	if h.secrets == nil {
		return page.SecretsView{Unavailable: true}, nil
	}
	ctx := c.UserContext()
	envs, err := h.store.ListEnvironments(ctx, a.TeamID, a.ID)
	if err != nil {
		return page.SecretsView{}, err
	}
	sort.Slice(envs, func(i, j int) bool { return envs[i].Name < envs[j].Name })
	names := make(map[string]string, len(envs))
	var v page.SecretsView
	for _, e := range envs {
		names[e.ID] = e.Name
		gen, err := h.secrets.Generated(ctx, a.TeamID, e.ID)
		if err != nil {
			return page.SecretsView{}, err
		}
		se := page.SecretEnvironment{ID: e.ID, Name: e.Name}
		for _, g := range gen {
			se.Generated = append(se.Generated, page.GeneratedRow{Name: g.Name, Version: g.CurrentVersion, Generated: when(&g.GeneratedAt), Regenerate: g.Regenerate})
		}
		// Previews are listed for their generated values, but access lists
		// name environments only.
		v.Environments = append(v.Environments, se)
	}
	list, err := h.secrets.List(ctx, a.TeamID, a.ID)
	if err != nil {
		return page.SecretsView{}, err
	}
	for _, s := range list {
		row := page.SecretRow{Name: s.Name, Version: s.CurrentVersion, Updated: when(&s.UpdatedAt),
			AllEnvironments: s.AllEnvironments, Environments: map[string]bool{}, Previews: s.Previews}
		var granted []string
		for _, id := range s.EnvironmentIDs {
			row.Environments[id] = true
			granted = append(granted, names[id])
		}
		switch {
		case s.AllEnvironments:
			row.Access = "every environment"
		case len(granted) == 0:
			row.Access = "no environment"
		default:
			sort.Strings(granted)
			row.Access = strings.Join(granted, ", ")
		}
		if s.Previews {
			row.Access += " + previews"
		}
		v.Secrets = append(v.Secrets, row)
	}
	return v, nil
}

// renderSecrets shows the Secrets tab with status, errs and notice.
func (h *handler) renderSecrets(c *fiber.Ctx, a store.Application, header page.AppHeader, status int, errs map[string]string, notice string) error {
	v, err := h.secretsPage(c, a)
	if err != nil {
		return err
	}
	if v.Declarations, v.HasManifest, err = h.secretDeclarations(c, a); err != nil {
		return err
	}
	v.Errs, v.Notice = errs, notice
	if isFragment(c) {
		c.Set("HX-Retarget", "#main")
		c.Set("HX-Reswap", "innerHTML")
	}
	return h.render(c, status, a.Name+" · Secrets", page.ApplicationSecrets(header, v))
}

// secretRefused re-renders the tab with a secrets refusal under key; any
// other error goes to handleError.
func (h *handler) secretRefused(c *fiber.Ctx, a store.Application, header page.AppHeader, key string, err error) error {
	var se *secrets.Error
	if !errors.As(err, &se) {
		return err
	}
	return h.renderSecrets(c, a, header, http.StatusUnprocessableEntity, map[string]string{key: se.Message + " (" + se.Code + ")"}, "")
}

// requireSecrets answers 503 when the server runs without a secret key.
func (h *handler) requireSecrets(c *fiber.Ctx) error {
	if h.secrets == nil {
		// An error, not a rendered page, so the handler stops here.
		return &codedError{status: http.StatusServiceUnavailable, code: "secrets_unavailable", msg: "this server has no secret key configured (SLIPWAY_SECRET_KEY_FILE)"}
	}
	return nil
}

// secretActor records the dashboard user as a version's author.
func secretActor(c *fiber.Ctx) string { return "user:" + visitorOf(c).user.ID }
