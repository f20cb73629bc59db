package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/forge/github"
)

// connect is "Connect GitHub": it sends the member to the App's
// installation page with a state bound to the team and the member, signed,
// expiring and accepted once by the setup callback.
func (g *githubUI) connect(c *fiber.Ctx) error {
	ctx, v := c.UserContext(), visitorOf(c)
	cfg, err := g.cfg.Source.Config(ctx)
	if err != nil {
		return fiber.NewError(http.StatusConflict, "No GitHub App is set up yet: a team owner sets it up on this page first.")
	}
	state, err := g.installStates().New(v.current.Team.ID, v.user.ID)
	if err != nil {
		return err
	}
	to, err := github.InstallURL(cfg, state)
	if err != nil {
		return err
	}
	return c.Redirect(to, http.StatusSeeOther)
}

// setup is the App's setup URL: GitHub sends the member back here after
// installing, with installation_id and the state. The state is verified
// (signature, expiry, the same member, never used) and consumed in the
// transaction that binds the installation to the state's team; anything
// wrong binds nothing and answers 4xx.
func (g *githubUI) setup(c *fiber.Ctx) error {
	id, ok := parseID(c.Query("installation_id"))
	if !ok {
		return g.renderError(c, http.StatusBadRequest, "installation_id_invalid", "The link from GitHub lacks a valid installation_id.")
	}
	state := c.Query("state")
	if state == "" {
		return g.renderError(c, http.StatusBadRequest, "install_state_missing", "The link from GitHub carries no state: start again from Connect GitHub.")
	}
	err := g.installStates().BindInstallation(c.UserContext(), g.store, state, id, visitorOf(c).user.ID)
	if err != nil {
		if f := g.stateFailure(c, err); f != err {
			return f
		}
		return g.renderError(c, http.StatusBadRequest, "installation_not_bound", "The installation could not be connected: "+err.Error())
	}
	return g.back(c, "installation_bound")
}
