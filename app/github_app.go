package app

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// The manifest flow: a team owner posts Slipway's App manifest to GitHub
// (manifestStart renders the form GitHub expects), GitHub creates the App
// and redirects to manifestCallback with a one-time code, which Slipway
// exchanges for the App's id, slug, private key and webhook secret and
// stores sealed. Works with GitHub Enterprise (the Source's URLs).

const (
	githubManifestCallbackPath = "/github/app/callback"
	githubSetupPath            = "/github/setup"
)

var githubOrgName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)

// manifestStart renders the page whose form posts the manifest to GitHub.
func (g *githubUI) manifestStart(c *fiber.Ctx) error {
	ctx, v := c.UserContext(), visitorOf(c)
	if err := g.checkNoApp(ctx); err != nil {
		return err
	}
	org := strings.TrimSpace(c.FormValue("organization"))
	if org != "" && !githubOrgName.MatchString(org) {
		return g.showWithErrors(c, map[string]string{"organization": "organization_invalid: a GitHub organization name is letters, digits and hyphens"})
	}
	state, err := g.manifestStates().New(v.current.Team.ID, v.user.ID)
	if err != nil {
		return err
	}
	base, err := g.cfg.Source.Base()
	if err != nil {
		return err
	}
	action, err := github.ManifestFormURL(base, org, state)
	if err != nil {
		return err
	}
	pub := g.publicURL(c)
	m := github.NewAppManifest("Slipway "+v.current.Team.Name, pub, githubManifestCallbackPath, githubSetupPath)
	return g.render(c, http.StatusOK, "Create the GitHub App", page.GitHubManifest(page.GitHubManifestView{Action: action, Manifest: m.JSON()}))
}

// manifestCallback exchanges GitHub's code for the App's credentials. The
// state is checked first (the same owner, unexpired, unused); it is
// consumed in the transaction that stores the App, so a failed exchange
// stores nothing.
func (g *githubUI) manifestCallback(c *fiber.Ctx) error {
	ctx, v := c.UserContext(), visitorOf(c)
	states := g.manifestStates()
	if _, err := states.Parse(c.Query("state")); err != nil {
		return g.stateFailure(c, err)
	}
	if err := g.checkNoApp(ctx); err != nil {
		return err
	}
	base, err := g.cfg.Source.Base()
	if err != nil {
		return err
	}
	client, err := github.New(base, github.Options{})
	if err != nil {
		return err
	}
	var app store.GitHubApp
	err = g.store.WithTx(ctx, func(tx *store.Store) error {
		if _, err := states.Verify(ctx, tx, c.Query("state"), v.user.ID); err != nil {
			return err
		}
		creds, err := client.ConvertManifest(ctx, c.Query("code"))
		if err != nil {
			return err
		}
		if app, err = github.SaveApp(ctx, tx, g.cfg.Source.Sealer, creds); err != nil {
			return err
		}
		_, err = tx.RecordEvent(ctx, v.current.Team.ID, store.EventParams{
			Actor: "user:" + v.user.ID, Verb: "github.app_registered", ObjectType: "github_app",
			ObjectID: app.Slug, Details: map[string]any{"app_id": app.AppID, "via": "manifest"},
		})
		return err
	})
	if err != nil {
		if f := g.stateFailure(c, err); f != err {
			return f
		}
		var ce *github.ConfigError
		if errors.As(err, &ce) {
			return g.renderError(c, http.StatusBadRequest, ce.Code, ce.Message)
		}
		return g.renderError(c, http.StatusBadGateway, "manifest_conversion_failed", "GitHub did not return the App's credentials: "+err.Error())
	}
	g.cfg.Source.Reset()
	return g.back(c, "app_registered")
}

// credentialsSave stores the credentials of an App created elsewhere.
func (g *githubUI) credentialsSave(c *fiber.Ctx) error {
	ctx, v := c.UserContext(), visitorOf(c)
	if err := g.checkNoApp(ctx); err != nil {
		return err
	}
	creds := github.AppCredentials{
		Slug: strings.TrimSpace(c.FormValue("app_slug")), PEM: strings.TrimSpace(c.FormValue("private_key")),
		WebhookSecret: strings.TrimSpace(c.FormValue("webhook_secret")),
	}
	errs := map[string]string{}
	id, ok := parseID(c.FormValue("app_id"))
	if !ok {
		errs["app_id"] = "app_id_invalid: the App id is a positive integer"
	}
	creds.AppID = id
	if !githubOrgName.MatchString(creds.Slug) || strings.ToLower(creds.Slug) != creds.Slug {
		errs["app_slug"] = "app_slug_invalid: the App's URL name: lowercase letters, digits and hyphens"
	}
	if creds.WebhookSecret == "" {
		errs["webhook_secret"] = "webhook_secret_missing: enter the App's webhook secret"
	}
	if len(errs) == 0 {
		// New parses the key: a bad one is named here, not at the first use.
		base, err := g.cfg.Source.Base()
		if err != nil {
			return err
		}
		base.AppID, base.AppSlug, base.PrivateKey = creds.AppID, creds.Slug, []byte(creds.PEM)
		if _, err := github.New(base, github.Options{}); err != nil {
			errs["private_key"] = "private_key_invalid: not a PEM RSA private key"
		}
	}
	if len(errs) > 0 {
		return g.showWithErrors(c, errs)
	}
	err := g.store.WithTx(ctx, func(tx *store.Store) error {
		app, err := github.SaveApp(ctx, tx, g.cfg.Source.Sealer, creds)
		if err != nil {
			return err
		}
		_, err = tx.RecordEvent(ctx, v.current.Team.ID, store.EventParams{
			Actor: "user:" + v.user.ID, Verb: "github.app_registered", ObjectType: "github_app",
			ObjectID: app.Slug, Details: map[string]any{"app_id": app.AppID, "via": "credentials"},
		})
		return err
	})
	if err != nil {
		return err
	}
	g.cfg.Source.Reset()
	return g.back(c, "app_registered")
}
