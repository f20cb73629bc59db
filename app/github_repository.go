package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/forge/github"
)

// repositoryConnect connects an application to a repository of one of the
// team's installations. The repository is looked up in the installation's
// own listing (through its token), so a member can only connect what the
// installation can read; the application becomes repository-backed
// through the same manifest edit as any other.
func (g *githubUI) repositoryConnect(c *fiber.Ctx) error {
	ctx, v := c.UserContext(), visitorOf(c)
	instID, ok1 := parseID(c.FormValue("installation_id"))
	repoID, ok2 := parseID(c.FormValue("repository_id"))
	if !ok1 || !ok2 {
		return g.showWithErrors(c, map[string]string{"": "installation_id and repository_id must be positive integers"})
	}
	app, err := g.store.GetApplication(ctx, v.current.Team.ID, c.FormValue("application"))
	if err != nil {
		return err
	}
	if _, err := g.store.GetGitHubInstallation(ctx, v.current.Team.ID, instID); err != nil {
		return err // another team's installation is not found
	}
	repos, err := g.cfg.Source.ListInstallationRepositories(ctx, instID)
	if err != nil {
		return g.renderError(c, http.StatusBadGateway, "github_unavailable", "GitHub did not list the installation's repositories; try again later.")
	}
	var repo github.Repository
	for _, r := range repos {
		if r.ID == repoID {
			repo = r
		}
	}
	if _, err := service.ConnectGitHubRepository(ctx, g.store, v.actor(), g.enqueue, app.ID, instID, repo); err != nil {
		return g.formFailure(c, err)
	}
	return g.back(c, "repository_connected")
}
