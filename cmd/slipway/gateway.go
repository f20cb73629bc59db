package main

import (
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/runtime/ingress"
)

// newGatewayCommand is `slipway gateway`, the ingress gateway that runs in
// the slipway-gateway container. Every flag defaults to its environment
// variable, which is how gatewayctl configures the container.
func newGatewayCommand() *cobra.Command {
	cfg, envErr := ingress.ConfigFromEnv(os.Getenv)
	maxBody, bodyIdle, send, trusted := os.Getenv(ingress.EnvMaxBodyBytes), os.Getenv(ingress.EnvBodyIdleTimeout), os.Getenv(ingress.EnvSendTimeout), os.Getenv(ingress.EnvTrustedProxies)
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Run the ingress gateway (HTTP/HTTPS reverse proxy fed by the control plane)",
		Long: `Run the ingress gateway. It reads its route table from the control plane
(GET /internal/gateway/routes, long-polled) over a unix socket or a URL with a
gateway token, keeps the last table in its data directory, and serves it even
while the control plane is down.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			limits, err := ingress.ParseLimits(maxBody, bodyIdle, send, trusted)
			if err != nil {
				return err
			}
			if envErr != nil && !errors.Is(envErr, ingress.ErrLimits) {
				return envErr
			}
			cfg.Limits = limits
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
			ingress.TuneGC()
			return ingress.Run(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.HTTPAddr, "http", cfg.HTTPAddr, "public HTTP listen address ($"+ingress.EnvListenHTTP+")")
	f.StringVar(&cfg.HTTPSAddr, "https", cfg.HTTPSAddr, "public HTTPS listen address, empty to disable ($"+ingress.EnvListenHTTPS+")")
	f.StringVar(&cfg.PrivateAddr, "private", cfg.PrivateAddr, "private listen address for private routes ($"+ingress.EnvListenPrivate+")")
	f.StringVar(&cfg.Source.SocketPath, "control-socket", cfg.Source.SocketPath, "control plane unix socket ($"+ingress.EnvControlSocket+")")
	f.StringVar(&cfg.Source.URL, "control-url", cfg.Source.URL, "control plane base URL when no socket is used ($"+ingress.EnvControlURL+")")
	f.StringVar(&cfg.Source.Token, "token", cfg.Source.Token, "gateway token for --control-url ($"+ingress.EnvToken+")")
	f.StringVar(&cfg.Source.TokenFile, "token-file", cfg.Source.TokenFile, "file holding the gateway token for --control-url ($"+ingress.EnvTokenFile+")")
	f.StringVar(&cfg.MetricsAddr, "metrics", cfg.MetricsAddr, "listen address of /metrics (slipway_gateway_*), empty to disable ($"+ingress.EnvMetricsAddr+")")
	f.StringVar(&cfg.MetricsTokenFile, "metrics-token-file", cfg.MetricsTokenFile, "file holding the bearer token /metrics requires ($"+ingress.EnvMetricsTokenFile+")")
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory for the last route table, certificates and the internal CA ($"+ingress.EnvDataDir+")")
	f.StringVar(&cfg.TLS.ACMEDirectory, "acme-directory", cfg.TLS.ACMEDirectory, "ACME directory URL; empty disables ACME ($"+ingress.EnvACMEDirectory+")")
	f.StringVar(&cfg.TLS.ACMEEmail, "acme-email", cfg.TLS.ACMEEmail, "ACME account e-mail ($"+ingress.EnvACMEEmail+")")
	f.StringVar(&cfg.TLS.ACMECARoot, "acme-ca-root", cfg.TLS.ACMECARoot, "PEM file of roots trusted for the ACME server ($"+ingress.EnvACMECARoot+")")
	f.StringVar(&cfg.TLS.CertDir, "cert-dir", cfg.TLS.CertDir, "directory of operator certificates NAME.crt + NAME.key ($"+ingress.EnvCertDir+")")
	f.BoolVar(&cfg.TLS.InternalCA, "internal-ca", cfg.TLS.InternalCA, "issue certificates from a local CA for names ACME does not cover ($"+ingress.EnvInternalCA+")")
	f.StringVar(&maxBody, "max-body-bytes", maxBody, "request body limit in bytes, 0 for none; empty: 100 MiB ($"+ingress.EnvMaxBodyBytes+")")
	f.StringVar(&bodyIdle, "body-idle-timeout", bodyIdle, "seconds a client may send nothing of its request body before it is cut off; empty: 60 ($"+ingress.EnvBodyIdleTimeout+")")
	f.StringVar(&send, "send-timeout", send, "seconds a write of a response may make no progress before the client's connection is closed; empty: 60 ($"+ingress.EnvSendTimeout+")")
	f.StringVar(&trusted, "trusted-proxies", trusted, "comma-separated CIDRs of proxies in front of the gateway whose X-Forwarded-* headers are kept ($"+ingress.EnvTrustedProxies+")")
	f.StringVar(&cfg.Name, "name", cfg.Name, "name the gateway reports itself as to the control plane, default the host name ($"+ingress.EnvName+")")
	return cmd
}
