package jobs

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/store"
)

// GitHubTokens mints installation tokens for the App (*github.Source).
type GitHubTokens interface {
	Config(ctx context.Context) (github.Config, error)
	InstallationToken(ctx context.Context, installationID int64) (string, error)
}

// GitHubCredentials reads the repositories of a GitHub installation with
// its installation token: only for an application connected to that
// installation, only for an http(s) URL on the App's GitHub host naming
// exactly the connected repository, and only while the installation is
// active. Anything else reads anonymously.
type GitHubCredentials struct {
	Store  *store.Store
	Tokens GitHubTokens
	Log    *slog.Logger
}

// RepositoryAuth implements RepositoryCredentials. A token GitHub refuses
// to mint (an outage) is logged and the read goes anonymous: a public
// repository still reads, a private one fails with its own clear error.
func (g *GitHubCredentials) RepositoryAuth(ctx context.Context, teamID, appID, repositoryURL string) (build.Auth, error) {
	if g == nil || g.Store == nil || g.Tokens == nil {
		return build.Auth{}, nil
	}
	link, err := g.Store.GetGitHubRepositoryLink(ctx, teamID, appID)
	if errors.Is(err, store.ErrNotFound) {
		return build.Auth{}, nil
	}
	if err != nil {
		return build.Auth{}, err
	}
	inst, err := g.Store.GetGitHubInstallation(ctx, teamID, link.InstallationID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !inst.Active()) {
		return build.Auth{}, nil
	}
	if err != nil {
		return build.Auth{}, err
	}
	cfg, err := g.Tokens.Config(ctx)
	if err != nil {
		return build.Auth{}, nil // no App: nothing to authenticate with
	}
	if !GitHubRepositoryURL(cfg.WebURL, repositoryURL, link.FullName) {
		return build.Auth{}, nil
	}
	tok, err := g.Tokens.InstallationToken(ctx, link.InstallationID)
	if err != nil {
		g.logger().WarnContext(ctx, "github installation token unavailable; reading the repository anonymously",
			"installation_id", link.InstallationID, "repository", link.FullName, "error", err)
		return build.Auth{}, nil
	}
	return build.Auth{Username: "x-access-token", Password: tok}, nil
}

func (g *GitHubCredentials) logger() *slog.Logger {
	if g.Log != nil {
		return g.Log
	}
	return slog.Default()
}

// GitHubRepositoryURL reports whether repositoryURL is the http(s) clone
// URL of fullName (owner/name) on the GitHub at webURL, with or without
// .git, ignoring case as GitHub does.
func GitHubRepositoryURL(webURL, repositoryURL, fullName string) bool {
	web, err1 := url.Parse(webURL)
	u, err2 := url.Parse(repositoryURL)
	if err1 != nil || err2 != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return false
	}
	if !strings.EqualFold(u.Host, web.Host) || u.Scheme != web.Scheme {
		return false
	}
	p := strings.TrimPrefix(u.Path, strings.TrimRight(web.Path, "/"))
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	return strings.EqualFold(p, fullName)
}
