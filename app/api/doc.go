// Package api is Slipway's JSON API v1, mounted under /api/v1 by package
// app. Callers authenticate with a team API token (Authorization: Bearer);
// a token acts for the member who created it, with the scopes it carries
// that the member's role still grants.
//
// Errors are {"code","message","details"}; another team's object is 404
// exactly as a missing one. Shared operations live in app/service. It must
// not import package app (app imports it) nor views.
package api
