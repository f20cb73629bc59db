package main

import (
	"errors"
	"log/slog"
	"net/http"
	"os"

	"github.com/slipwayhq/slipway/app/webhook"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
)

// githubSettings reads the GitHub App from the environment. An
// installation without one runs without GitHub: no webhook endpoint, and
// the GitHub jobs (registered so every process knows the kinds) skip their
// API calls.
func githubSettings(logger *slog.Logger) (github.Config, bool) {
	cfg, err := github.ConfigFromEnv(os.Getenv, nil)
	if errors.Is(err, github.ErrNotConfigured) {
		return github.Config{}, false
	}
	if err != nil {
		logger.Error("GitHub App configuration ignored", "error", err)
		return github.Config{}, false
	}
	return cfg, true
}

// githubJobDeps are the GitHub workers' dependencies.
func githubJobDeps(st *store.Store, logger *slog.Logger) jobs.GitHubDeps {
	deps := jobs.GitHubDeps{Store: st, Logger: logger, PublicURL: os.Getenv("SLIPWAY_PUBLIC_URL")}
	if cfg, ok := githubSettings(logger); ok {
		client, err := github.New(cfg, github.Options{})
		if err != nil {
			logger.Error("GitHub client", "error", err)
		} else {
			deps.GitHub = client
		}
	}
	return deps
}

// githubWebhook is the intake mounted at /webhooks/github, or nil when no
// GitHub App is configured.
func githubWebhook(st *store.Store, inserter webhook.Inserter, logger *slog.Logger) http.Handler {
	cfg, ok := githubSettings(logger)
	if !ok || len(cfg.WebhookSecret) == 0 {
		return nil
	}
	return webhook.New(webhook.Config{Store: st, Jobs: inserter, Secret: webhook.StaticSecret(cfg.WebhookSecret), Logger: logger})
}
