package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// AppManifest is the GitHub App manifest Slipway posts to create its App
// (GitHub's manifest flow): a form with a "manifest" field holding this as
// JSON, posted to ManifestFormURL.
type AppManifest struct {
	Name               string            `json:"name"`
	URL                string            `json:"url"`
	HookAttributes     HookAttributes    `json:"hook_attributes"`
	RedirectURL        string            `json:"redirect_url"`
	SetupURL           string            `json:"setup_url"`
	SetupOnUpdate      bool              `json:"setup_on_update"`
	Public             bool              `json:"public"`
	DefaultPermissions map[string]string `json:"default_permissions"`
	DefaultEvents      []string          `json:"default_events"`
}

// HookAttributes is the manifest's webhook.
type HookAttributes struct {
	URL    string `json:"url"`
	Active bool   `json:"active"`
}

// NewAppManifest describes Slipway's App for the Slipway reachable at
// publicURL (e.g. https://slipway.example.com/): webhooks to
// /webhooks/github, the manifest code back to redirectPath, the setup
// callback (after installation) to setupPath. The permissions are the
// least Slipway needs: read code, comment on pull requests, set statuses.
func NewAppManifest(name, publicURL, redirectPath, setupPath string) AppManifest {
	base := strings.TrimRight(publicURL, "/")
	return AppManifest{
		Name:           name,
		URL:            base + "/",
		HookAttributes: HookAttributes{URL: base + "/webhooks/github", Active: true},
		RedirectURL:    base + redirectPath,
		SetupURL:       base + setupPath,
		SetupOnUpdate:  true,
		DefaultPermissions: map[string]string{
			"contents":      "read",
			"metadata":      "read",
			"pull_requests": "write",
			"issues":        "write",
			"statuses":      "write",
		},
		DefaultEvents: []string{"push", "pull_request"},
	}
}

// JSON returns the manifest as the form field's value.
func (m AppManifest) JSON() string {
	b, _ := json.Marshal(m) // strings, bools and maps of strings cannot fail
	return string(b)
}

// ManifestFormURL is where the manifest form is posted: the user's
// account, or an organization's when org is set. state comes back with the
// code, so the redirect can be tied to the request.
func ManifestFormURL(cfg Config, org, state string) (string, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return "", err
	}
	path := "settings/apps/new"
	if org != "" {
		path = "organizations/" + url.PathEscape(org) + "/settings/apps/new"
	}
	return cfg.WebURL + path + "?state=" + url.QueryEscape(state), nil
}

// AppCredentials are what the manifest conversion returns. PEM, the
// webhook secret and the client secret are secrets: seal them (SaveApp).
type AppCredentials struct {
	AppID         int64
	Slug          string
	Name          string
	HTMLURL       string
	ClientID      string
	ClientSecret  string
	WebhookSecret string
	PEM           string
}

// ConvertManifest exchanges the code GitHub redirected back with for the
// new App's credentials (POST /app-manifests/{code}/conversions). The code
// is single-use and expires within an hour; it is the only credential.
func (c *Client) ConvertManifest(ctx context.Context, code string) (AppCredentials, error) {
	if code == "" || strings.ContainsAny(code, "/?#") {
		return AppCredentials{}, &ConfigError{"code", "manifest_code_invalid", "the code GitHub returned is missing or malformed"}
	}
	cfg, _, err := c.anon.Apps.CompleteAppManifest(ctx, code)
	if err != nil {
		return AppCredentials{}, fmt.Errorf("convert app manifest: %w", err)
	}
	out := AppCredentials{
		AppID: cfg.GetID(), Slug: cfg.GetSlug(), Name: cfg.GetName(), HTMLURL: cfg.GetHTMLURL(),
		ClientID: cfg.GetClientID(), ClientSecret: cfg.GetClientSecret(),
		WebhookSecret: cfg.GetWebhookSecret(), PEM: cfg.GetPEM(),
	}
	if out.AppID <= 0 || out.Slug == "" || out.PEM == "" || out.WebhookSecret == "" {
		return AppCredentials{}, fmt.Errorf("convert app manifest: manifest_conversion_incomplete: GitHub's answer lacks the app id, slug, key or webhook secret")
	}
	return out, nil
}

// InstallURL is where "Connect GitHub" sends the user: the App's
// installation page, carrying the signed state the setup callback checks.
func InstallURL(cfg Config, state string) (string, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return "", err
	}
	if cfg.AppSlug == "" {
		return "", &ConfigError{EnvAppSlug, "app_slug_missing", "the App's slug is needed for its installation page"}
	}
	return cfg.WebURL + "apps/" + url.PathEscape(cfg.AppSlug) + "/installations/new?state=" + url.QueryEscape(state), nil
}
