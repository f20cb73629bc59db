package github

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// Source resolves the daemon's GitHub App for every caller (webhook
// intake, jobs, dashboard): the App configured in the environment or
// configuration file wins; without one, the App an installation owner
// registered from the dashboard (manifest flow or entered credentials),
// read from the store and opened with the sealer. It keeps one Client per
// App, so installation tokens stay cached. It is safe for concurrent use.
type Source struct {
	// Static is the configured App; nil when none is configured.
	Static *Config
	// Store and Sealer read a registered App; nil Store means only Static.
	Store  *store.Store
	Sealer Sealer
	// APIURL and WebURL locate GitHub for a registered App (and for the
	// manifest flow): "" is github.com; GitHub Enterprise sets its own.
	APIURL, WebURL string
	Options        Options
	// TTL bounds how long a registered App is cached (default 30 s).
	TTL time.Duration

	mu      sync.Mutex
	client  *Client
	loaded  time.Time
	missing bool
}

// Configured reports whether an App is configured statically (the
// dashboard then shows it read-only).
func (s *Source) Configured() bool { return s != nil && s.Static != nil }

// Reset forgets the cached App, after the dashboard registered one.
func (s *Source) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client, s.loaded, s.missing = nil, time.Time{}, false
}

// Client returns the App's client; ErrNotConfigured when no App is
// configured or registered.
func (s *Source) Client(ctx context.Context) (*Client, error) {
	if s == nil {
		return nil, ErrNotConfigured
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ttl := s.TTL
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	if s.Static != nil {
		if s.client == nil {
			c, err := New(*s.Static, s.Options)
			if err != nil {
				return nil, err
			}
			s.client = c
		}
		return s.client, nil
	}
	if s.Store == nil || s.Sealer == nil {
		return nil, ErrNotConfigured
	}
	if !s.loaded.IsZero() && time.Since(s.loaded) < ttl {
		if s.missing {
			return nil, ErrNotConfigured
		}
		return s.client, nil
	}
	cfg, err := LoadConfig(ctx, s.Store, s.Sealer, s.APIURL, s.WebURL)
	if errors.Is(err, store.ErrNotFound) {
		s.client, s.loaded, s.missing = nil, time.Now(), true
		return nil, ErrNotConfigured
	}
	if err != nil {
		return nil, err
	}
	// The same App keeps its client (and its cached tokens).
	if s.client == nil || !sameApp(s.client.Config(), cfg) {
		c, err := New(cfg, s.Options)
		if err != nil {
			return nil, err
		}
		s.client = c
	}
	s.loaded, s.missing = time.Now(), false
	return s.client, nil
}

func sameApp(a, b Config) bool {
	return a.AppID == b.AppID && a.APIURL == b.APIURL && string(a.PrivateKey) == string(b.PrivateKey) &&
		string(a.WebhookSecret) == string(b.WebhookSecret) && a.AppSlug == b.AppSlug
}

// Config is the resolved App's configuration.
func (s *Source) Config(ctx context.Context) (Config, error) {
	c, err := s.Client(ctx)
	if err != nil {
		return Config{}, err
	}
	return c.Config(), nil
}

// Base is where GitHub is, with no App: for the manifest flow, which
// creates the App.
func (s *Source) Base() (Config, error) {
	if s.Static != nil {
		return Config{APIURL: s.Static.APIURL, WebURL: s.Static.WebURL}.normalize()
	}
	return Config{APIURL: s.APIURL, WebURL: s.WebURL}.normalize()
}

// WebhookSecret is the intake's secret (webhook.Config.Secret).
func (s *Source) WebhookSecret(ctx context.Context) ([]byte, error) {
	cfg, err := s.Config(ctx)
	if err != nil {
		return nil, err
	}
	return cfg.WebhookSecret, nil
}

// CollaboratorPermission calls the App's client.
func (s *Source) CollaboratorPermission(ctx context.Context, installationID int64, fullName, user string) (Permission, error) {
	c, err := s.Client(ctx)
	if err != nil {
		return "", err
	}
	return c.CollaboratorPermission(ctx, installationID, fullName, user)
}

// UpsertComment calls the App's client.
func (s *Source) UpsertComment(ctx context.Context, installationID int64, fullName string, number int, applicationID string, knownID int64, body string) (int64, error) {
	c, err := s.Client(ctx)
	if err != nil {
		return 0, err
	}
	return c.UpsertComment(ctx, installationID, fullName, number, applicationID, knownID, body)
}

// CreateStatus calls the App's client.
func (s *Source) CreateStatus(ctx context.Context, installationID int64, fullName, sha string, st Status) error {
	c, err := s.Client(ctx)
	if err != nil {
		return err
	}
	return c.CreateStatus(ctx, installationID, fullName, sha, st)
}

// InstallationToken calls the App's client.
func (s *Source) InstallationToken(ctx context.Context, installationID int64) (string, error) {
	c, err := s.Client(ctx)
	if err != nil {
		return "", err
	}
	return c.InstallationToken(ctx, installationID)
}

// GetInstallation calls the App's client.
func (s *Source) GetInstallation(ctx context.Context, installationID int64) (Installation, error) {
	c, err := s.Client(ctx)
	if err != nil {
		return Installation{}, err
	}
	return c.GetInstallation(ctx, installationID)
}

// ListInstallationRepositories calls the App's client.
func (s *Source) ListInstallationRepositories(ctx context.Context, installationID int64) ([]Repository, error) {
	c, err := s.Client(ctx)
	if err != nil {
		return nil, err
	}
	return c.ListInstallationRepositories(ctx, installationID)
}
