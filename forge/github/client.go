package github

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/golang-jwt/jwt/v5"
	gh "github.com/google/go-github/v88/github"
)

// Options tune a Client; the zero value is production's.
type Options struct {
	// Transport carries requests (default http.DefaultTransport).
	Transport http.RoundTripper
	// Retry bounds retries of failed calls.
	Retry RetryPolicy
	// Timeout bounds each call including retries (default 60 s).
	Timeout time.Duration
}

// Client talks to GitHub as the App (JWT) and as its installations
// (installation tokens, cached and refreshed by ghinstallation). It is
// safe for concurrent use.
type Client struct {
	cfg     Config
	key     *rsa.PrivateKey // nil: only the manifest flow works
	tr      http.RoundTripper
	timeout time.Duration
	app     *gh.Client // authenticated as the App
	anon    *gh.Client // unauthenticated (manifest conversion)

	mu       sync.Mutex
	installs map[int64]*ghinstallation.Transport
}

// New builds a Client. A Config without a private key gives a Client that
// can only convert an app manifest (the App does not exist yet).
func New(cfg Config, opts Options) (*Client, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := &Client{
		cfg:      cfg,
		tr:       &retryTransport{base: base, policy: opts.Retry.withDefaults(), now: time.Now},
		timeout:  opts.Timeout,
		installs: map[int64]*ghinstallation.Transport{},
	}
	if c.timeout <= 0 {
		c.timeout = 60 * time.Second
	}
	if c.anon, err = c.newGH(c.tr); err != nil {
		return nil, err
	}
	if len(cfg.PrivateKey) == 0 {
		return c, nil
	}
	if cfg.AppID <= 0 {
		return nil, &ConfigError{EnvAppID, "app_id_invalid", "an App id is required with a private key"}
	}
	if c.key, err = jwt.ParseRSAPrivateKeyFromPEM(cfg.PrivateKey); err != nil {
		return nil, &ConfigError{EnvPrivateKeyFile, "private_key_invalid", "not a PEM RSA private key: " + err.Error()}
	}
	if c.app, err = c.newGH(c.appsTransport()); err != nil {
		return nil, err
	}
	return c, nil
}

// Config returns the normalized configuration.
func (c *Client) Config() Config { return c.cfg }

func (c *Client) newGH(tr http.RoundTripper) (*gh.Client, error) {
	api := c.cfg.APIURL
	// go-github's own rate-limit bookkeeping would refuse calls before they
	// are made; the retry transport is the one place that decides.
	return gh.NewClient(
		gh.WithHTTPClient(&http.Client{Transport: tr, Timeout: c.timeout}),
		gh.WithURLs(&api, &api),
		gh.WithDisableRateLimitCheck(),
		gh.WithUserAgent("slipway"),
	)
}

// appsTransport signs requests with a fresh App JWT. Each installation gets
// its own, because ghinstallation writes to it while refreshing a token.
func (c *Client) appsTransport() *ghinstallation.AppsTransport {
	atr := ghinstallation.NewAppsTransportFromPrivateKey(c.tr, c.cfg.AppID, c.key)
	atr.BaseURL = strings.TrimRight(c.cfg.APIURL, "/")
	return atr
}

// ErrNoPrivateKey is returned by App and installation calls of a Client
// built without a private key.
var ErrNoPrivateKey = errors.New("github_app_not_configured: the GitHub App's private key is not configured")

func (c *Client) installation(installationID int64) (*ghinstallation.Transport, error) {
	if c.key == nil {
		return nil, ErrNoPrivateKey
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.installs[installationID]
	if !ok {
		t = ghinstallation.NewFromAppsTransport(c.appsTransport(), installationID)
		c.installs[installationID] = t
	}
	return t, nil
}

func (c *Client) installationClient(installationID int64) (*gh.Client, error) {
	t, err := c.installation(installationID)
	if err != nil {
		return nil, err
	}
	return c.newGH(t)
}

// InstallationToken returns a token of the installation, valid for at
// least a minute (cached until then). Git uses it as basic auth
// x-access-token:<token>.
func (c *Client) InstallationToken(ctx context.Context, installationID int64) (string, error) {
	t, err := c.installation(installationID)
	if err != nil {
		return "", err
	}
	tok, err := t.Token(ctx)
	if err != nil {
		return "", fmt.Errorf("installation %d token: %w", installationID, err)
	}
	return tok, nil
}

// Installation is what GitHub says about an installation.
type Installation struct {
	ID           int64
	AccountLogin string
	AccountType  string
	Suspended    bool
}

// GetInstallation reads an installation as the App; an id that is not an
// installation of this App is an error (404).
func (c *Client) GetInstallation(ctx context.Context, installationID int64) (Installation, error) {
	if c.app == nil {
		return Installation{}, ErrNoPrivateKey
	}
	in, _, err := c.app.Apps.GetInstallation(ctx, installationID)
	if err != nil {
		return Installation{}, fmt.Errorf("get installation %d: %w", installationID, err)
	}
	out := Installation{ID: in.GetID(), Suspended: in.SuspendedAt != nil}
	if a := in.GetAccount(); a != nil {
		out.AccountLogin, out.AccountType = a.GetLogin(), a.GetType()
	}
	return out, nil
}

// Repository is a repository an installation can read.
type Repository struct {
	ID            int64
	FullName      string // owner/name
	DefaultBranch string
	Private       bool
	CloneURL      string
}

// ListInstallationRepositories lists every repository the installation
// was granted, following pagination.
func (c *Client) ListInstallationRepositories(ctx context.Context, installationID int64) ([]Repository, error) {
	cl, err := c.installationClient(installationID)
	if err != nil {
		return nil, err
	}
	var out []Repository
	opts := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := cl.Apps.ListRepos(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list repositories of installation %d: %w", installationID, err)
		}
		for _, r := range page.Repositories {
			out = append(out, Repository{
				ID: r.GetID(), FullName: r.GetFullName(), DefaultBranch: r.GetDefaultBranch(),
				Private: r.GetPrivate(), CloneURL: r.GetCloneURL(),
			})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Permission is a user's permission on a repository: admin, maintain,
// write, triage, read or none.
type Permission string

// CanWrite reports whether the permission lets its holder push, which is
// what earns an automatic preview.
func (p Permission) CanWrite() bool {
	switch p {
	case "admin", "maintain", "write":
		return true
	}
	return false
}

// CollaboratorPermission returns the user's permission on owner/repo. A
// user who is not a collaborator has "none" (GitHub answers 404 for some of
// them, which is the same thing).
func (c *Client) CollaboratorPermission(ctx context.Context, installationID int64, fullName, user string) (Permission, error) {
	cl, err := c.installationClient(installationID)
	if err != nil {
		return "", err
	}
	owner, repo, err := splitFullName(fullName)
	if err != nil {
		return "", err
	}
	lvl, resp, err := cl.Repositories.GetPermissionLevel(ctx, owner, repo, user)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return "none", nil
		}
		return "", fmt.Errorf("permission of %s on %s: %w", user, fullName, err)
	}
	// role_name distinguishes maintain from write; permission folds it.
	if r := lvl.GetRoleName(); r == "maintain" {
		return "maintain", nil
	}
	return Permission(lvl.GetPermission()), nil
}

func splitFullName(fullName string) (owner, repo string, err error) {
	owner, repo, ok := strings.Cut(fullName, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return "", "", fmt.Errorf("repository_invalid: %q is not owner/name", fullName)
	}
	return owner, repo, nil
}
