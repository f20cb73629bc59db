package main

import (
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/webhook"
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/store"
)

// githubSettings reads the GitHub App of the [github] table (file or
// SLIPWAY_GITHUB_*). Without one, an App registered from the dashboard is
// used (githubSource).
func githubSettings(conf config.Config, logger *slog.Logger) (github.Config, bool) {
	cfg, err := github.ConfigFromSettings(githubSettingsOf(conf), nil)
	if errors.Is(err, github.ErrNotConfigured) {
		return github.Config{}, false
	}
	if err != nil {
		logger.Error("GitHub App configuration ignored", "error", err)
		return github.Config{}, false
	}
	return cfg, true
}

// githubStateKeyPurpose derives the key that signs install and manifest
// states from the daemon's secret key.
const githubStateKeyPurpose = "slipway/github-states/v1"

var (
	githubSourceOnce sync.Once
	githubSourceVal  *github.Source
	githubKeyring    *keyring.Keyring
)

// githubSource is the process's one GitHub App resolver: the configured
// App, else the one registered from the dashboard (sealed with the secret
// key). serve, worker and dev share it within a process, all with the
// process's one configuration.
func githubSource(st *store.Store, conf config.Config, logger *slog.Logger) *github.Source {
	githubSourceOnce.Do(func() {
		gs := githubSettingsOf(conf)
		src := &github.Source{Store: st, APIURL: gs.APIURL, WebURL: gs.WebURL}
		if cfg, ok := githubSettings(conf, logger); ok {
			src.Static = &cfg
		}
		if kr, err := loadSecretKey(conf); err == nil {
			src.Sealer, githubKeyring = kr, kr
		} else if src.Static == nil {
			logger.Warn("no secret key: an App registered from the dashboard cannot be read", "error", err)
		}
		githubSourceVal = src
	})
	return githubSourceVal
}

// githubJobDeps are the GitHub workers' dependencies.
func githubJobDeps(st *store.Store, conf config.Config, logger *slog.Logger) jobs.GitHubDeps {
	return jobs.GitHubDeps{Store: st, Logger: logger, PublicURL: conf.PublicURL, GitHub: githubSource(st, conf, logger)}
}

// useGitHubCredentials lets deployments and sync read the private
// repositories of connected installations with installation tokens.
func useGitHubCredentials(deps jobs.Deps, conf config.Config, logger *slog.Logger) {
	creds := &jobs.GitHubCredentials{Store: deps.Store, Tokens: githubSource(deps.Store, conf, logger), Log: logger}
	if deps.Pipeline != nil {
		deps.Pipeline.Credentials = creds
	}
	if deps.Sync != nil {
		deps.Sync.Credentials = creds
	}
}

// githubWebhook is the intake mounted at /webhooks/github. Its secret is
// the App's, read per delivery; with no App at all it answers 503.
func githubWebhook(st *store.Store, conf config.Config, inserter webhook.Inserter, logger *slog.Logger, reg *metrics.Registry) http.Handler {
	src := githubSource(st, conf, logger)
	return webhook.New(webhook.Config{Store: st, Jobs: inserter, Secret: src.WebhookSecret, Logger: logger, Metrics: reg})
}

// githubDashboard configures the dashboard's GitHub pages, or nil without
// a secret key to sign their states.
func githubDashboard(st *store.Store, conf config.Config, logger *slog.Logger) *app.GitHub {
	src := githubSource(st, conf, logger)
	if githubKeyring == nil {
		return nil
	}
	return &app.GitHub{Source: src, StateKey: githubKeyring.DeriveKey(githubStateKeyPurpose), PublicURL: conf.PublicURL}
}
