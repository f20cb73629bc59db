package github

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// DefaultAPIURL is github.com's REST API.
const DefaultAPIURL = "https://api.github.com/"

// Config is what the daemon knows about its GitHub App. The dashboard can
// also fill it from credentials stored by the manifest flow (LoadConfig).
type Config struct {
	// APIURL is the REST API base, with a trailing slash:
	// https://api.github.com/ or https://ghe.example.com/api/v3/.
	APIURL string
	// WebURL is where people go (app pages, installation): https://github.com/
	// by default, and the host of APIURL for GitHub Enterprise.
	WebURL        string
	AppID         int64
	AppSlug       string
	PrivateKey    []byte // PEM
	WebhookSecret []byte
}

// Environment variables ConfigFromEnv reads.
const (
	EnvAPIURL            = "SLIPWAY_GITHUB_API_URL"
	EnvWebURL            = "SLIPWAY_GITHUB_WEB_URL"
	EnvAppID             = "SLIPWAY_GITHUB_APP_ID"
	EnvAppSlug           = "SLIPWAY_GITHUB_APP_SLUG"
	EnvPrivateKeyFile    = "SLIPWAY_GITHUB_PRIVATE_KEY_FILE"
	EnvWebhookSecretFile = "SLIPWAY_GITHUB_WEBHOOK_SECRET_FILE"
)

// ConfigError names the setting that is wrong and a snake_case code.
type ConfigError struct {
	Field   string // the environment variable or form field
	Code    string
	Message string
}

func (e *ConfigError) Error() string { return e.Field + ": " + e.Code + ": " + e.Message }

// ErrNotConfigured is returned by ConfigFromEnv when no GitHub App is
// configured at all (SLIPWAY_GITHUB_APP_ID unset): GitHub is optional.
var ErrNotConfigured = errors.New("github_not_configured: SLIPWAY_GITHUB_APP_ID is not set")

// Settings are the daemon's GitHub settings as configured (config.GitHub
// maps onto it field by field): file paths, not their contents.
type Settings struct {
	APIURL            string
	WebURL            string
	AppID             int64
	AppSlug           string
	PrivateKeyFile    string
	WebhookSecretFile string
}

// ConfigFromEnv reads the SLIPWAY_GITHUB_* variables through getenv and
// the files they name through readFile (nil means os.Getenv and
// os.ReadFile). Every problem names its variable.
func ConfigFromEnv(getenv func(string) string, readFile func(string) ([]byte, error)) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	rawID := strings.TrimSpace(getenv(EnvAppID))
	if rawID == "" {
		return Config{}, ErrNotConfigured
	}
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil || id <= 0 {
		return Config{}, &ConfigError{EnvAppID, "app_id_invalid", fmt.Sprintf("%q is not a positive integer", rawID)}
	}
	return ConfigFromSettings(Settings{
		APIURL: getenv(EnvAPIURL), WebURL: getenv(EnvWebURL), AppID: id, AppSlug: strings.TrimSpace(getenv(EnvAppSlug)),
		PrivateKeyFile: getenv(EnvPrivateKeyFile), WebhookSecretFile: getenv(EnvWebhookSecretFile),
	}, readFile)
}

// ConfigFromSettings reads the key and secret files the settings name
// (readFile nil means os.ReadFile). AppID 0 is ErrNotConfigured. Errors
// name the setting by its environment variable.
func ConfigFromSettings(st Settings, readFile func(string) ([]byte, error)) (Config, error) {
	if readFile == nil {
		readFile = os.ReadFile
	}
	if st.AppID == 0 {
		return Config{}, ErrNotConfigured
	}
	if st.AppID < 0 {
		return Config{}, &ConfigError{EnvAppID, "app_id_invalid", "the App id must be positive"}
	}
	cfg := Config{APIURL: st.APIURL, WebURL: st.WebURL, AppID: st.AppID, AppSlug: st.AppSlug}
	if cfg.AppSlug == "" {
		return Config{}, &ConfigError{EnvAppSlug, "app_slug_missing", "set it to the App's slug (github.com/apps/<slug>)"}
	}
	for _, f := range []struct {
		env, code, path string
		dst             *[]byte
	}{
		{EnvPrivateKeyFile, "private_key_file", st.PrivateKeyFile, &cfg.PrivateKey},
		{EnvWebhookSecretFile, "webhook_secret_file", st.WebhookSecretFile, &cfg.WebhookSecret},
	} {
		if f.path == "" {
			return Config{}, &ConfigError{f.env, f.code + "_missing", "set it to the path of the file"}
		}
		b, err := readFile(f.path)
		if err != nil {
			return Config{}, &ConfigError{f.env, f.code + "_unreadable", err.Error()}
		}
		*f.dst = []byte(strings.TrimSpace(string(b)))
		if len(*f.dst) == 0 {
			return Config{}, &ConfigError{f.env, f.code + "_empty", f.path + " is empty"}
		}
	}
	return cfg.normalize()
}

// normalize fills defaults and checks the URLs.
func (c Config) normalize() (Config, error) {
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	api, err := url.Parse(c.APIURL)
	if err != nil || (api.Scheme != "http" && api.Scheme != "https") || api.Host == "" {
		return Config{}, &ConfigError{EnvAPIURL, "api_url_invalid", fmt.Sprintf("%q is not an http(s) URL", c.APIURL)}
	}
	if !strings.HasSuffix(api.Path, "/") {
		api.Path += "/"
	}
	c.APIURL = api.String()
	if c.WebURL == "" {
		c.WebURL = defaultWebURL(api)
	}
	web, err := url.Parse(c.WebURL)
	if err != nil || (web.Scheme != "http" && web.Scheme != "https") || web.Host == "" {
		return Config{}, &ConfigError{EnvWebURL, "web_url_invalid", fmt.Sprintf("%q is not an http(s) URL", c.WebURL)}
	}
	if !strings.HasSuffix(web.Path, "/") {
		web.Path += "/"
	}
	c.WebURL = web.String()
	return c, nil
}

// defaultWebURL: api.github.com's people live on github.com; GitHub
// Enterprise serves both from one host (API under /api/v3/), and so does a
// test fake.
func defaultWebURL(api *url.URL) string {
	if api.Host == "api.github.com" {
		return "https://github.com/"
	}
	return (&url.URL{Scheme: api.Scheme, Host: api.Host, Path: "/"}).String()
}
