package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/slipwayhq/slipway/config"
)

// devConfig is slipway dev's configuration: <data-dir>/slipway.toml (seeded
// with every key commented out at its default when missing) unless
// --config or SLIPWAY_CONFIG names another file, then the environment; its
// data_dir is always dev's data directory, so telemetry receivers' socket
// directories (and the rest of the local state) live there. load is
// loadConfigOr bound to the command; nil loads without a --config flag.
//
// dev builds from local checkouts, so file:// repositories are allowed
// unless SLIPWAY_GIT_ALLOW_FILE_URLS says otherwise (set in the process's
// environment, for everything that reads it); serve and worker keep the
// default, off (docs/security.md). For the same reason dev allows
// outbound connections to loopback.
func devConfig(load func(fallback string) (config.Config, error), dataDir string) (config.Config, error) {
	if _, set := os.LookupEnv("SLIPWAY_GIT_ALLOW_FILE_URLS"); !set {
		os.Setenv("SLIPWAY_GIT_ALLOW_FILE_URLS", "true")
	}
	if load == nil {
		load = func(fallback string) (config.Config, error) { return config.Options{Fallback: fallback}.Load() }
	}
	file := filepath.Join(dataDir, "slipway.toml")
	if err := config.WriteDefault(file); err != nil && !errors.Is(err, fs.ErrExist) {
		return config.Config{}, err
	}
	cfg, err := load(file)
	if err != nil {
		return config.Config{}, err
	}
	cfg.DataDir = dataDir
	// Local development reaches git servers and registries on this
	// machine; serve and worker refuse loopback unless the operator
	// allows it (docs/security.md).
	cfg.Security.AllowedOutboundNetworks = append(cfg.Security.AllowedOutboundNetworks, devOutboundNetworks...)
	return cfg, nil
}

// devOutboundNetworks are the networks slipway dev adds to
// [security] allowed_outbound_networks: loopback.
var devOutboundNetworks = []string{"127.0.0.0/8", "::1/128"}
