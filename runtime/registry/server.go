package registry

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/distribution/distribution/v3/registry/storage"
	"github.com/distribution/distribution/v3/registry/storage/driver"
	"github.com/distribution/distribution/v3/registry/storage/driver/factory"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem" // the storage the server uses
	"github.com/sirupsen/logrus"
)

// catalogPage is the most repositories one catalog request returns.
const catalogPage = 1000

// User is the user name of the embedded registry's one account.
const User = "slipway"

// ServerConfig configures the embedded registry.
type ServerConfig struct {
	// Dir is where blobs and manifests are stored.
	Dir string
	// Password is the one account's (User's) password; it must not be empty.
	Password string
	// GCDelay is how long after the last deletion garbage collection runs
	// (a minute when zero).
	GCDelay time.Duration
	Log     *slog.Logger
}

// Server is the embedded registry as an http.Handler.
type Server struct {
	cfg    ServerConfig
	app    http.Handler
	driver driver.StorageDriver
	ctx    context.Context
	// writes hold gc for reading; garbage collection takes it for writing,
	// so no upload runs while unreferenced blobs are swept.
	gc      sync.RWMutex
	gcTimer *time.Timer
	gcMu    sync.Mutex
}

// NewServer returns the registry. ctx bounds its background work.
func NewServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.Password == "" {
		return nil, fmt.Errorf("registry: no password (registry_password_missing)")
	}
	if cfg.Dir == "" {
		return nil, fmt.Errorf("registry: no storage directory (registry_dir_missing)")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.GCDelay == 0 {
		cfg.GCDelay = time.Minute
	}
	// distribution logs every request (and every 404 a push's probes
	// cause) through logrus; failures that matter reach the client.
	logrus.SetOutput(io.Discard)
	params := configuration.Parameters{"rootdirectory": cfg.Dir}
	conf := &configuration.Configuration{}
	// Upload state is signed with it; one registry process needs no
	// shared one, but a fixed one survives a restart mid-upload.
	secret := sha256.Sum256([]byte("slipway-registry-http\x00" + cfg.Password))
	conf.HTTP.Secret = hex.EncodeToString(secret[:])
	conf.Catalog.MaxEntries = catalogPage
	conf.Storage = configuration.Storage{
		"filesystem":  params,
		"delete":      configuration.Parameters{"enabled": true},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}
	s := &Server{cfg: cfg, ctx: ctx, app: handlers.NewApp(ctx, conf)}
	// Garbage collection works on the same directory through a driver of
	// its own (the app keeps its driver to itself).
	var err error
	if s.driver, err = factory.Create(ctx, "filesystem", params); err != nil {
		return nil, fmt.Errorf("registry storage: %w", err)
	}
	return s, nil
}

// ServeHTTP checks the credentials and serves the registry API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, pass, ok := r.BasicAuth()
	if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(User)) != 1 || subtle.ConstantTimeCompare([]byte(pass), []byte(s.cfg.Password)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="slipway"`)
		w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.gc.RLock()
		defer s.gc.RUnlock()
	}
	s.app.ServeHTTP(w, r)
	if r.Method == http.MethodDelete {
		s.scheduleGC()
	}
}

// scheduleGC runs garbage collection GCDelay after the last deletion.
func (s *Server) scheduleGC() {
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	if s.gcTimer != nil {
		s.gcTimer.Stop()
	}
	s.gcTimer = time.AfterFunc(s.cfg.GCDelay, func() {
		if err := s.CollectGarbage(s.ctx); err != nil {
			s.cfg.Log.Warn("registry garbage collection failed", "err", err)
		}
	})
}

// CollectGarbage removes the blobs no manifest refers to any more (those
// of deleted manifests). Writes wait while it runs.
func (s *Server) CollectGarbage(ctx context.Context) error {
	s.gc.Lock()
	defer s.gc.Unlock()
	start := time.Now()
	ns, err := storage.NewRegistry(ctx, s.driver, storage.EnableDelete)
	if err != nil {
		return err
	}
	if err := storage.MarkAndSweep(ctx, s.driver, ns, storage.GCOpts{RemoveUntagged: true, Quiet: true}); err != nil {
		return fmt.Errorf("registry garbage collection: %w", err)
	}
	s.cfg.Log.Info("registry garbage collected", "duration_ms", time.Since(start).Milliseconds())
	return nil
}
