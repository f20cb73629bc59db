package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/client"
	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/registry"
)

// registryPasswordPurpose derives the embedded registry's password from
// the secret key: every worker (and the registry, through a Swarm secret)
// gets the same one with nothing stored.
const registryPasswordPurpose = "slipway embedded registry password v1"

// newRegistryProvider is where the worker's images go, from [registry].
func newRegistryProvider(cfg config.Config, kr *keyring.Keyring, engine *client.Client, logger *slog.Logger) (*registry.Provider, error) {
	rc := cfg.Registry
	mode := rc.Mode
	if rc.URL != "" {
		mode = registry.ModeExternal
	}
	p := &registry.Provider{Mode: mode, Nodes: engine, Engine: engine, APIURL: rc.APIURL}
	if mode == registry.ModeExternal {
		password := ""
		if rc.PasswordFile != "" {
			b, err := os.ReadFile(rc.PasswordFile)
			if err != nil {
				return nil, fmt.Errorf("registry.password_file: %w", err)
			}
			password = strings.TrimSpace(string(b))
		}
		t, err := registry.ExternalTarget(rc.URL, rc.User, password, rc.APIURL)
		if err != nil {
			return nil, err
		}
		p.External = t
		return p, nil
	}
	image := rc.Image
	if image == "" {
		image = cfg.Ingress.Image
	}
	p.Embedded = &registry.Embedded{
		Engine:   engine,
		Image:    image,
		Port:     rc.Port,
		Password: hex.EncodeToString(kr.DeriveKey(registryPasswordPurpose)),
		Log:      logger,
		BuildImage: func(ctx context.Context) (string, error) {
			return gatewayctl.New(engine, logger, "").BuildDevImage(ctx, "")
		},
	}
	return p, nil
}

// newRegistryCommand is `slipway registry`: the processes of the embedded
// registry's Swarm services.
func newRegistryCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Run the embedded image registry or its per-node relay (inside their Swarm services)",
	}
	cmd.AddCommand(newRegistryServeCommand(), newRegistryRelayCommand())
	return cmd
}

func newRegistryServeCommand() *cobra.Command {
	listen := envOr(registry.EnvListen, ":5000")
	dir := envOr(registry.EnvDir, "/data")
	passwordFile := os.Getenv(registry.EnvPasswordFile)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the embedded registry (the slipway-registry service runs it)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
			b, err := os.ReadFile(passwordFile)
			if err != nil {
				return fmt.Errorf("registry password file: %w (registry_password_missing)", err)
			}
			srv, err := registry.NewServer(ctx, registry.ServerConfig{Dir: dir, Password: strings.TrimSpace(string(b)), Log: log})
			if err != nil {
				return err
			}
			hs := &http.Server{Addr: listen, Handler: srv, ReadHeaderTimeout: 30 * time.Second}
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = hs.Shutdown(sctx)
			}()
			log.Info("registry listening", "addr", listen, "dir", dir)
			if err := hs.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", listen, "listen address ($"+registry.EnvListen+")")
	f.StringVar(&dir, "dir", dir, "storage directory ($"+registry.EnvDir+")")
	f.StringVar(&passwordFile, "password-file", passwordFile, "file holding the password of user "+registry.User+" ($"+registry.EnvPasswordFile+")")
	return cmd
}

func newRegistryRelayCommand() *cobra.Command {
	var listen, upstream string
	cmd := &cobra.Command{
		Use:   "relay",
		Short: "Forward TCP connections to the registry (the slipway-registry-relay service runs it on every node)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			log.Info("registry relay listening", "addr", listen, "upstream", upstream)
			return registry.Relay(ctx, ln, upstream, log)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", ":5000", "listen address")
	cmd.Flags().StringVar(&upstream, "upstream", registry.ServiceName+":5000", "registry host:port")
	return cmd
}
