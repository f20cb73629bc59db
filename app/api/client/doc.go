// Package client is a small typed client for Slipway's API v1, used by the
// CLI verbs (slipway whoami, app ..., env ...) and end-to-end tests. It
// reads SLIPWAY_URL and SLIPWAY_TOKEN through FromEnv.
//
// It imports app/api only for the wire types; it must not import store,
// views or package app.
package client
