// Package config is the daemon's configuration: the types of
// /etc/slipway/slipway.toml, their defaults, strict decoding with the key,
// line and column of every mistake, environment overrides (SLIPWAY_<PATH>
// plus the older short names as aliases), validation, the commented default
// file `slipway dev` seeds, and docs/configuration.md, all generated from the
// struct tags in config.go so that documentation cannot drift from code.
//
// Precedence, lowest first: defaults, the file, the environment, explicit
// command-line flags (Options.Overrides).
//
// It must not import any other package of this module: every process
// (serve, worker, dev, gateway, the CLI) loads it, and it must stay cheap
// and free of Postgres, Docker and HTTP.
package config
