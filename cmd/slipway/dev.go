package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/localpg"
)

// devOptions are `slipway dev`'s flags.
type devOptions struct {
	dataDir            string
	bootstrapTokenFile string
	// loadConfig loads the configuration, reading fallback when neither
	// --config nor SLIPWAY_CONFIG names a file.
	loadConfig func(fallback string) (config.Config, error)
}

// newDevCommand is `slipway dev`: everything in one process for a laptop
// or a test, with a private Postgres when DATABASE_URL is unset.
func newDevCommand() *cobra.Command {
	var o devOptions
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run Slipway on this machine: private Postgres (unless DATABASE_URL is set), dashboard, API and worker",
		Long: `Run the whole control plane in one process. When DATABASE_URL is unset, a
private Postgres cluster is created in <data-dir>/pg with the system's initdb
and postgres, and stopped again on Ctrl-C (SIGINT) or SIGTERM.

--bootstrap-token-file PATH creates team "dev" with owner dev@localhost when
missing and writes a new API token with every scope to PATH, so scripts can
export SLIPWAY_TOKEN=$(cat PATH).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			o.loadConfig = func(fallback string) (config.Config, error) {
				return loadConfigOr(cmd, fallback, map[string]string{"listen": "listen"})
			}
			return runDev(ctx, o, cmd.OutOrStdout(), newLogger())
		},
	}
	cmd.Flags().StringVar(&o.dataDir, "data-dir", ".slipway", "directory for the private Postgres cluster and other local state")
	cmd.Flags().String("listen", config.Default().Listen, "address the dashboard and API listen on (config listen, env SLIPWAY_LISTEN)")
	cmd.Flags().StringVar(&o.bootstrapTokenFile, "bootstrap-token-file", "", "create team dev / dev@localhost if missing and write an all-scope API token to this file")
	addConfigFlag(cmd)
	return cmd
}

func runDev(ctx context.Context, o devOptions, out io.Writer, logger *slog.Logger) (err error) {
	dataDir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return fmt.Errorf("--data-dir %s: %w", o.dataDir, err)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("--data-dir %s: %w", o.dataDir, err)
	}
	o.dataDir = dataDir

	// Loaded once and handed to every part.
	cfg, err := devConfig(o.loadConfig, dataDir)
	if err != nil {
		return err
	}
	setLogLevel(cfg)
	// dev keeps its own secret key in the data directory unless one is
	// configured; serve and worker elsewhere refuse to start without one.
	if cfg.SecretKeyFile == "" && cfg.SecretKey == "" {
		keyFile := filepath.Join(dataDir, "secret.key")
		if _, err := keyring.LoadOrCreate(keyFile); err != nil {
			return fmt.Errorf("secret key %s: %w", keyFile, err)
		}
		cfg.SecretKeyFile = keyFile
	}

	// serve and worker share the pool; the first to fail, or the private
	// Postgres exiting on its own, stops everything.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	dbURL := cfg.DatabaseURL
	if dbURL == "" {
		cluster, err := localpg.Start(ctx, dataDir, logger)
		if err != nil {
			return fmt.Errorf("private postgres in %s: %w", filepath.Join(dataDir, "pg"), err)
		}
		defer func() {
			cancel() // so the watcher below does not report this stop as a crash
			// Stop even though ctx is done: that is the usual way here.
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if serr := cluster.Stop(stopCtx); serr != nil {
				err = errors.Join(err, fmt.Errorf("stop private postgres: %w", serr))
			}
		}()
		dbURL = cluster.URL()
		go func() {
			select {
			case <-cluster.Done():
				logger.Error("private postgres exited; stopping")
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	pool, err := openDatabase(ctx, dbURL, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	logger, stopLogs := exportLogs(ctx, logger, cfg, "slipway-dev")
	defer stopLogs()
	st := store.New(pool)
	if err := storeQuotaDefaults(ctx, st, cfg); err != nil {
		return err
	}

	// The HTTP side queues deployments for the worker below and reads
	// Docker for the status endpoint, exactly as serve does.
	inserter, err := newJobClient(pool, logger, false, cfg, nil)
	if err != nil {
		return err
	}
	runtime, err := newRuntimeReader(logger)
	if err != nil {
		return err
	}
	kr, err := loadSecretKey(cfg)
	if err != nil {
		return err
	}
	secretService := secrets.New(st, kr)
	notifications := notificationService(st, cfg, kr, insertWith(inserter))
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	base := "http://" + ln.Addr().String()
	if err := announce(ctx, st, o, base, out, logger); err != nil {
		ln.Close()
		return err
	}
	if err := startDevGateway(ctx, st, kr, cfg, dataDir, out, logger); err != nil {
		ln.Close()
		return err
	}

	// One registry for both halves: dev's /metrics shows the worker's
	// deployments and the intake's deliveries together.
	reg := newRegistry(pool, logger)
	metricsHTTP, err := metricsHandler(cfg, reg)
	if err != nil {
		ln.Close()
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() {
		defer cancel()
		errs[0] = serveHTTP(ctx, ln, app.Config{Store: st, Logger: logger, Jobs: inserter, Runtime: runtime, Logs: runtime, Webhook: githubWebhook(st, cfg, inserter, logger, reg), Metrics: metricsHTTP, GitHub: githubDashboard(st, cfg, logger), Secrets: secretService, Previews: newPreviewService(st, cfg, &build.Lister{}), AllowFileURLs: cfg.Git.AllowFileURLs, PublicURL: cfg.PublicURL, Notifications: notifications})
	})
	wg.Go(func() {
		defer cancel()
		errs[1] = runWorker(ctx, pool, logger, cfg, reg)
	})
	wg.Wait()
	fmt.Fprintln(out, "Slipway stopped.")
	return errors.Join(errs...)
}

// announce prints where Slipway listens and how to get in, and writes the
// bootstrap token when asked.
func announce(ctx context.Context, st *store.Store, o devOptions, base string, out io.Writer, logger *slog.Logger) error {
	fmt.Fprintf(out, "Slipway is running at %s\n", base)
	if o.bootstrapTokenFile != "" {
		b, err := service.Bootstrap(ctx, st, auth.DefaultArgon2, time.Now())
		if err != nil {
			return fmt.Errorf("--bootstrap-token-file: %w", err)
		}
		if err := os.WriteFile(o.bootstrapTokenFile, []byte(b.Token+"\n"), 0o600); err != nil {
			return fmt.Errorf("--bootstrap-token-file %s: %w", o.bootstrapTokenFile, err)
		}
		fmt.Fprintf(out, "API token for team %q written to %s\n", b.Team.Slug, o.bootstrapTokenFile)
		fmt.Fprintf(out, "  export SLIPWAY_URL=%s SLIPWAY_TOKEN=$(cat %s)\n", base, o.bootstrapTokenFile)
		if b.Password != "" {
			fmt.Fprintf(out, "Dashboard login: %s / %s (shown once)\n", service.BootstrapEmail, b.Password)
		}
	}
	// dev keeps first run one click away on this machine: the setup link
	// carries the token (serve only logs it).
	token, err := setupToken(ctx, st, o.dataDir, logger)
	if err != nil {
		return err
	}
	switch n, err := st.CountUsers(ctx); {
	case err != nil:
		return err
	case n > 0:
		fmt.Fprintf(out, "Log in: %s/login\n", base)
	case token != "":
		fmt.Fprintf(out, "First run: open %s/setup?token=%s to create the first account\n", base, url.QueryEscape(token))
	default:
		fmt.Fprintf(out, "First run: open %s/setup with the setup token from %s, or run slipway admin create-owner\n", base, filepath.Join(o.dataDir, setupTokenFile))
	}
	return nil
}
