package app

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// GitHub is what the dashboard's GitHub surfaces need (github_*.go): App
// registration, Connect GitHub and its setup callback, connecting an
// application to a repository, and approving fork previews.
type GitHub struct {
	// Source resolves the App (configured, or registered from here).
	Source *github.Source
	// StateKey signs install and manifest states (at least 32 bytes; the
	// daemon derives it from its secret key).
	StateKey []byte
	// PublicURL is where GitHub sends people back (the manifest's URLs);
	// "" uses the request's own base URL.
	PublicURL string
}

// githubUI serves the GitHub pages.
type githubUI struct {
	*handler
	cfg GitHub
}

// registerGitHub mounts the GitHub pages; called by New after the
// session and CSRF middleware.
func registerGitHub(f *fiber.App, h *handler, cfg *GitHub) {
	if cfg == nil || cfg.Source == nil {
		// The navigation links here on every server: say why there is
		// nothing, rather than answer 404.
		f.Get("/github", h.requireTeam, func(c *fiber.Ctx) error {
			return h.renderError(c, http.StatusServiceUnavailable, "github_unavailable",
				"GitHub is not set up on this server: it needs the server's secret key (secret_key_file or secret_key in the configuration) to sign GitHub's install and setup links. Restart slipway serve with one.")
		})
		return
	}
	g := &githubUI{handler: h, cfg: *cfg}
	f.Get("/github", h.requireTeam, g.show)
	f.Post("/github/app/manifest", h.requireTeam, g.requireOwner, g.manifestStart)
	f.Get("/github/app/callback", h.requireTeam, g.requireOwner, g.manifestCallback)
	f.Post("/github/app", h.requireTeam, g.requireOwner, g.credentialsSave)
	f.Post("/github/connect", h.requireScope(auth.AppsWrite), g.connect)
	f.Get("/github/setup", h.requireScope(auth.AppsWrite), g.setup)
	f.Post("/github/repositories/connect", h.requireScope(auth.AppsWrite), g.repositoryConnect)
	f.Post("/applications/:app/pull-requests/:number/approve", h.requireScope(auth.AppsDeploy), g.approve)
}

// requireOwner: registering the App, which serves every team, is for the
// owners of a team only.
func (g *githubUI) requireOwner(c *fiber.Ctx) error {
	if visitorOf(c).role() != auth.RoleOwner {
		return fiber.NewError(http.StatusForbidden, "Only a team owner can set up the GitHub App.")
	}
	return c.Next()
}

// installStates signs the states of Connect GitHub.
func (g *githubUI) installStates() github.States {
	return github.States{Key: g.cfg.StateKey, Now: g.now, Installations: g.cfg.Source}
}

// manifestStates signs the states of the manifest flow, under a key of its
// own so neither kind of state passes for the other.
func (g *githubUI) manifestStates() github.States {
	m := append([]byte("manifest\x00"), g.cfg.StateKey...)
	return github.States{Key: m, Now: g.now}
}

func (g *githubUI) publicURL(c *fiber.Ctx) string {
	if g.cfg.PublicURL != "" {
		return strings.TrimRight(g.cfg.PublicURL, "/")
	}
	return c.BaseURL()
}

// show renders the team's GitHub page.
func (g *githubUI) show(c *fiber.Ctx) error {
	v, err := g.view(c)
	if err != nil {
		return err
	}
	return g.render(c, http.StatusOK, "GitHub", page.GitHub(v))
}

// githubNotices are the messages a redirect back to /github may show.
var githubNotices = map[string]string{
	"app_registered":       "The GitHub App is set up.",
	"installation_bound":   "GitHub is connected to this team.",
	"repository_connected": "The application is connected to the repository; its environments now deploy from it.",
	"preview_approved":     "Approved: the preview deploys next.",
}

func (g *githubUI) back(c *fiber.Ctx, notice string) error {
	return redirect(c, "/github?notice="+notice)
}

func (g *githubUI) view(c *fiber.Ctx) (page.GitHubView, error) {
	ctx, v := c.UserContext(), visitorOf(c)
	team := v.current.Team.ID
	out := page.GitHubView{CanAdmin: v.role() == auth.RoleOwner, Errors: map[string]string{}}
	cfg, err := g.cfg.Source.Config(ctx)
	switch {
	case err == nil:
		out.App, out.AppSlug = "registered", cfg.AppSlug
		if g.cfg.Source.Configured() {
			out.App = "configured"
		}
		out.AppURL = cfg.WebURL + "apps/" + cfg.AppSlug
	case errors.Is(err, github.ErrNotConfigured):
	default:
		out.Errors[""] = "The GitHub App's stored credentials cannot be read: " + err.Error()
	}
	insts, err := g.store.ListGitHubInstallations(ctx, team)
	if err != nil {
		return out, err
	}
	for _, in := range insts {
		row := page.GitHubInstallationRow{ID: in.InstallationID, Account: in.AccountLogin, Status: installationStatus(in)}
		if in.Active() && out.App != "" {
			repos, err := g.cfg.Source.ListInstallationRepositories(ctx, in.InstallationID)
			if err != nil {
				row.Error = "GitHub did not list the repositories (try again later): " + err.Error()
			}
			for _, r := range repos {
				row.Repositories = append(row.Repositories, page.GitHubRepositoryRow{ID: r.ID, FullName: r.FullName, Private: r.Private})
			}
		}
		out.Installations = append(out.Installations, row)
	}
	apps, err := g.store.ListApplications(ctx, team)
	if err != nil {
		return out, err
	}
	for _, a := range apps {
		row := page.GitHubApplicationRow{ID: a.ID, Name: a.Name}
		link, err := g.store.GetGitHubRepositoryLink(ctx, team, a.ID)
		if err == nil {
			row.Repository = link.FullName
		} else if !errors.Is(err, store.ErrNotFound) {
			return out, err
		}
		out.Applications = append(out.Applications, row)
		prs, err := g.store.ListPendingGitHubPullRequests(ctx, team, a.ID)
		if err != nil {
			return out, err
		}
		for _, pr := range prs {
			out.PullRequests = append(out.PullRequests, page.GitHubPullRequestRow{
				ApplicationID: a.ID, ApplicationName: a.Name, Repository: pr.FullName, Author: pr.AuthorLogin,
				Branch: pr.HeadBranch, Number: pr.Number, FromFork: pr.FromFork,
			})
		}
	}
	if n, ok := githubNotices[c.Query("notice")]; ok {
		out.Notice = n
	}
	return out, nil
}

func installationStatus(in store.GitHubInstallation) string {
	switch {
	case in.DeletedAt != nil:
		return "uninstalled"
	case in.SuspendedAt != nil:
		return "suspended"
	}
	return "active"
}

// showWithErrors renders the page with form errors (422).
func (g *githubUI) showWithErrors(c *fiber.Ctx, errs map[string]string) error {
	v, err := g.view(c)
	if err != nil {
		return err
	}
	for k, m := range errs {
		v.Errors[k] = m
	}
	return g.render(c, http.StatusUnprocessableEntity, "GitHub", page.GitHub(v))
}

// parseID reads a positive integer form or query value.
func parseID(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n, err == nil && n > 0
}

// stateFailure answers a state that does not verify: 400 (403 for another
// user's), with the state error's code, binding nothing.
func (g *githubUI) stateFailure(c *fiber.Ctx, err error) error {
	code, msg, _ := strings.Cut(err.Error(), ": ")
	status := http.StatusBadRequest
	switch {
	case errors.Is(err, github.ErrStateWrongUser):
		status = http.StatusForbidden
	case errors.Is(err, github.ErrStateInvalid), errors.Is(err, github.ErrStateExpired), errors.Is(err, github.ErrStateUsed):
	case errors.Is(err, store.ErrNotFound):
		code, msg = "not_member", "You are no longer a member of the team that started this."
		status = http.StatusForbidden
	default:
		return err
	}
	return g.renderError(c, status, code, msg)
}

// checkNoStoredApp refuses a second registration: the App serves every
// team, and replacing it would cut every installation off.
func (g *githubUI) checkNoApp(ctx context.Context) error {
	if g.cfg.Source.Configured() {
		return fiber.NewError(http.StatusConflict, "The GitHub App is set in the daemon's configuration.")
	}
	if _, err := g.store.GetGitHubApp(ctx); err == nil {
		return fiber.NewError(http.StatusConflict, "A GitHub App is registered already.")
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// approve is the dashboard's approve button.
func (g *githubUI) approve(c *fiber.Ctx) error {
	a, err := g.store.GetApplication(c.UserContext(), visitorOf(c).current.Team.ID, c.Params("app"))
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(c.Params("number"))
	if _, err := service.ApprovePullRequestPreview(c.UserContext(), g.store, visitorOf(c).actor(), g.enqueue, a.ID, n); err != nil {
		return g.formFailure(c, err)
	}
	return g.back(c, "preview_approved")
}

// formFailure shows an input error on the page (422), at the top since
// the page's forms share it; other errors go to handleError.
func (g *githubUI) formFailure(c *fiber.Ctx, err error) error {
	errs, ok := fieldErrors(err)
	if !ok {
		return err
	}
	var msgs []string
	for _, m := range errs {
		msgs = append(msgs, m)
	}
	return g.showWithErrors(c, map[string]string{"": strings.Join(msgs, " ")})
}

// githubFormActions is where dashboard forms may post besides this origin:
// GitHub's web origin, for the App manifest form and the redirects to
// GitHub's install pages (browsers apply form-action to those too).
func githubFormActions(cfg *GitHub) []string {
	if cfg == nil || cfg.Source == nil {
		return nil
	}
	base, err := cfg.Source.Base()
	if err != nil {
		return nil
	}
	if o := originOf(base.WebURL); o != "" {
		return []string{o}
	}
	return nil
}
