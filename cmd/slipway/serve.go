package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/authcache"
	"github.com/slipwayhq/slipway/store/changecache"
)

const envDatabaseURL = "DATABASE_URL"

// newServeCommand is `slipway serve`: the HTTP control plane (dashboard,
// API). It migrates the database first, so a new version can be rolled out
// by starting it.
func newServeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP control plane: dashboard and API (needs DATABASE_URL)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			logger := newLogger()
			cfg, err := loadConfig(cmd, serveFlagKeys)
			if err != nil {
				return err
			}
			setLogLevel(cfg)
			// Before anything else: without a key serve must not start at all.
			kr, err := loadSecretKey(cfg)
			if err != nil {
				return err
			}
			pool, err := openDatabase(ctx, cfg.DatabaseURL, logger)
			if err != nil {
				return err
			}
			defer pool.Close()
			st := store.New(pool)
			// Before the logs are exported: the token goes to this
			// process's own log only.
			if _, err := setupToken(ctx, st, cfg.DataDir, logger); err != nil {
				return err
			}
			if err := storeQuotaDefaults(ctx, st, cfg); err != nil {
				return err
			}
			logger, stopLogs := exportLogs(ctx, logger, cfg, "slipway-serve")
			defer stopLogs()
			inserter, err := newJobClient(pool, logger, false, cfg, nil)
			if err != nil {
				return err
			}
			runtime, err := newRuntimeReader(logger)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", cfg.Listen)
			if err != nil {
				return fmt.Errorf("listen %s: %w", cfg.Listen, err)
			}
			logger.Info("serving", "url", "http://"+ln.Addr().String())
			startServeGatewayFeed(ctx, st, kr, cfg, logger)
			reg := newRegistry(pool, logger)
			metricsHTTP, err := metricsHandler(cfg, reg)
			if err != nil {
				return err
			}
			defer exportMetrics(ctx, logger, cfg, "slipway-serve", reg)()
			return serveHTTP(ctx, ln, app.Config{Store: st, Logger: logger, SecureCookies: cfg.SecureCookies, Jobs: inserter, Runtime: runtime, Logs: runtime, Webhook: githubWebhook(st, cfg, inserter, logger, reg), Metrics: metricsHTTP, GitHub: githubDashboard(st, cfg, logger), Secrets: secrets.New(st, kr), Previews: newPreviewService(st, cfg, &build.Lister{}), AllowFileURLs: cfg.Git.AllowFileURLs, PublicURL: cfg.PublicURL, Notifications: notificationService(st, cfg, kr, insertWith(inserter))})
		},
	}
	// Defaults come from the configuration (listen, secure_cookies); a
	// flag the user sets wins over file and environment.
	def := config.Default()
	cmd.Flags().String("listen", def.Listen, "address to listen on (config listen, env SLIPWAY_LISTEN)")
	cmd.Flags().Bool("secure-cookies", def.SecureCookies,
		"mark cookies Secure even on plain HTTP, for a TLS-terminating proxy in front (config secure_cookies, env SLIPWAY_SECURE_COOKIES)")
	addConfigFlag(cmd)
	return cmd
}

// serveFlagKeys are serve's flags that set configuration keys.
var serveFlagKeys = map[string]string{"listen": "listen", "secure-cookies": "secure_cookies"}

// openDatabase connects and migrates; errors name DATABASE_URL.
func openDatabase(ctx context.Context, url string, logger *slog.Logger) (*pgxpool.Pool, error) {
	if url == "" {
		return nil, fmt.Errorf("%s is not set: point it at Postgres (postgres://user@host:5432/db), or use `slipway dev`, which starts its own", envDatabaseURL)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envDatabaseURL, err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgx defaults to max(4, CPUs), which queues a busy dashboard behind
		// a handful of connections; River's workers need their own too.
		cfg.MaxConns = 20
	}
	if !strings.Contains(url, "pool_min_conns") {
		// A few connections stay open while idle, so the first burst of
		// requests (or webhook deliveries) after a quiet spell does not
		// wait for Postgres to start backends.
		cfg.MinConns = 4
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envDatabaseURL, err)
	}
	if err := store.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%s: %w", envDatabaseURL, err)
	}
	logger.Info("database migrated")
	return pool, nil
}

// serveHTTP runs the dashboard and API on ln until ctx ends, then drains
// requests for up to 10 seconds. Sessions and tokens, and what the busiest
// pages read of a team, are kept while serve listens for their changes
// (store/authcache, store/changecache).
func serveHTTP(ctx context.Context, ln net.Listener, cfg app.Config) error {
	if cfg.AuthCache == nil {
		cfg.AuthCache = authcache.New(cfg.Store, cfg.Logger)
		go cfg.AuthCache.Run(ctx)
	}
	if cfg.TeamReads == nil {
		cfg.TeamReads = changecache.New(cfg.Store, store.TeamDataChannel, cfg.Logger)
		go cfg.TeamReads.Run(ctx)
	}
	f := app.New(cfg)
	errc := make(chan error, 1)
	go func() { errc <- f.Listener(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	if err := f.ShutdownWithTimeout(10 * time.Second); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("http shutdown: %w", err)
	}
	return nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
