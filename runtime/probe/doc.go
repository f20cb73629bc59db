// Package probe holds the static HTTP health-check probe (probe.c, built by
// this directory's Makefile with musl into probe-linux-amd64) and embeds the
// built binary. The Swarm driver stores it as a Swarm config and mounts it
// at /run/slipway/probe in every service with an HTTP health check, so the
// check works in images that contain nothing else.
//
// The binary is committed so that `go build` works without a C toolchain;
// `make` rebuilds it when probe.c changes. It must stay under Swarm's
// 1,024,000-byte config limit (TestBinary_Size).
//
// It imports nothing but the standard library.
package probe
