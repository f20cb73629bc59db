package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/partial"
)

// gettingStarted is the team's first-steps checklist, each step ticked
// from what the team has really done; nil once every step is done.
func (h *handler) gettingStarted(c *fiber.Ctx, teamID string) ([]partial.ChecklistItem, error) {
	ctx := c.UserContext()
	p, err := teamRead(h, c, teamID, "progress", func() (store.TeamProgress, error) { return h.store.GetTeamProgress(ctx, teamID) })
	if err != nil || p.Done() {
		return nil, err
	}
	return checklist(p), nil
}

func checklist(p store.TeamProgress) []partial.ChecklistItem {
	return []partial.ChecklistItem{
		{ID: "application", Label: "Create an application", Hint: "paste a manifest below, or start with just a name", URL: "/applications#from-manifest", Done: p.Applications},
		{ID: "deploy", Label: "Deploy it", Hint: "Save and deploy on its Manifest tab, or Deploy on its Environments tab", Done: p.Deployed},
		{ID: "route", Label: "Add a route", Hint: "a [[spec.routes]] hostname in the manifest serves it once deployed", Done: p.Routed},
		{ID: "github", Label: "Connect GitHub", Hint: "deploy on push and get a preview per pull request", URL: "/github", Done: p.GitHub},
		{ID: "teammate", Label: "Invite a teammate", Hint: "with a role that fits what they do", URL: "/members", Done: p.Teammates},
		{ID: "token", Label: "Create an API token for the CLI", Hint: "slipway app apply uses it", URL: "/tokens", Done: p.Tokens},
	}
}
