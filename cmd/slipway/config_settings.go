package main

import (
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
)

// One function per consumer maps the loaded configuration (file, then
// SLIPWAY_* variables, then flags) onto that package's settings, so a key
// set only in the file reaches serve, worker and dev like one set in the
// environment.

// keyringConfig says where the key-encryption key is: secret_key_file,
// else secret_key.
func keyringConfig(cfg config.Config) keyring.Config {
	return keyring.Config{KeyFile: cfg.SecretKeyFile, Key: cfg.SecretKey}
}

// githubSettingsOf is the [github] table. The web URL is not a key (it
// follows from api_url); SLIPWAY_GITHUB_WEB_URL still overrides it.
func githubSettingsOf(cfg config.Config) github.Settings {
	g := cfg.GitHub
	return github.Settings{
		APIURL: g.APIURL, WebURL: os.Getenv(github.EnvWebURL), AppID: g.AppID, AppSlug: g.AppSlug,
		PrivateKeyFile: g.PrivateKeyFile, WebhookSecretFile: g.WebhookSecretFile,
	}
}

// pipelineSettingsOf is the worker's deployment settings:
// [reconciliation] timeouts, images.pull, installation_id and
// ingress.enabled.
func pipelineSettingsOf(cfg config.Config) pipelineSettings {
	r := cfg.Reconciliation
	return pipelineSettings{
		ConvergenceTimeout: time.Duration(r.ConvergenceTimeoutSeconds) * time.Second,
		PrepareTimeout:     time.Duration(r.PrepareTimeoutSeconds) * time.Second,
		PullImages:         cfg.Images.Pull,
		Installation:       cfg.InstallationID,
		Ingress:            cfg.Ingress.Enabled,
		Outbound:           outboundPolicy(cfg),
	}
}

// jobsConfig is the River client's configuration: work says whether it
// runs jobs; worker.deploy_concurrency and
// reconciliation.scan_interval_seconds size the deploy queue and the drift
// scans.
func jobsConfig(cfg config.Config, work bool, logger *slog.Logger) jobs.Config {
	return jobs.Config{
		Work:              work,
		Logger:            logger,
		DeployConcurrency: cfg.Worker.DeployConcurrency,
		ReconcileInterval: time.Duration(cfg.Reconciliation.ScanIntervalSeconds) * time.Second,
	}
}

// gatewayContainerConfig is the gateway container serve and dev keep, from
// [ingress]: published ports, the private listener, the image, the
// certificate settings handed to the gateway as its SLIPWAY_ACME_* and
// SLIPWAY_GATEWAY_CERT_DIR variables, the request limits and trusted
// proxies as its SLIPWAY_GATEWAY_MAX_BODY_BYTES, _BODY_IDLE_TIMEOUT_SECONDS,
// _SEND_TIMEOUT_SECONDS and _TRUSTED_PROXIES, and the metrics listener.
// SLIPWAY_GATEWAY_INTERNAL_CA, a gateway-only switch, is passed through.
func gatewayContainerConfig(cfg config.Config) gatewayctl.Config {
	in := cfg.Ingress
	gc := gatewayctl.Config{
		HTTPPort: in.HTTPPort, HTTPSPort: in.HTTPSPort, PrivateAddr: in.PrivateAddr, Image: in.Image,
		MetricsAddr: in.MetricsAddr, MetricsTokenFile: in.MetricsTokenFile,
		Env: map[string]string{},
	}
	for name, v := range map[string]string{
		ingress.EnvACMEDirectory: in.ACME.Directory,
		ingress.EnvACMEEmail:     in.ACME.Email,
		ingress.EnvACMECARoot:    in.ACME.CARoot,
		ingress.EnvCertDir:       in.ACME.CertDir,
		ingress.EnvInternalCA:    os.Getenv(ingress.EnvInternalCA),
		// 0 is no limit, for the gateway as in the configuration.
		ingress.EnvMaxBodyBytes:    strconv.FormatInt(in.MaxBodyBytes, 10),
		ingress.EnvBodyIdleTimeout: strconv.Itoa(in.BodyIdleTimeoutSeconds),
		ingress.EnvSendTimeout:     strconv.Itoa(in.SendTimeoutSeconds),
		ingress.EnvTrustedProxies:  strings.Join(in.TrustedProxies, ","),
	} {
		if v != "" {
			gc.Env[name] = v
		}
	}
	return gc
}

// gatewayEnabled says whether serve and dev run the gateway container:
// ingress.enabled = false turns it off (and the route feed with it, see
// startDevGateway), SLIPWAY_GATEWAY=off only the container, and so does
// SLIPWAY_GATEWAY=nodes (the gateways run on the ingress nodes).
func gatewayEnabled(cfg config.Config) bool {
	return cfg.Ingress.Enabled && os.Getenv(envGateway) != "off" && os.Getenv(envGateway) != gatewayNodes
}

// processLogLevel is the level of every logger newLogger makes: info until
// the configuration is loaded, then log_level (setLogLevel).
var processLogLevel slog.LevelVar

// setLogLevel applies log_level (validated by the loader) to the process's
// loggers.
func setLogLevel(cfg config.Config) {
	processLogLevel.Set(logLevelOf(cfg))
}

// logLevelOf is log_level as a slog.Level; the loader has checked it.
func logLevelOf(cfg config.Config) slog.Level {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	return level
}
