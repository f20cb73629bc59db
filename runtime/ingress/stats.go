package ingress

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/slipwayhq/slipway/metrics"
)

// metricsHandler is the gateway's /metrics behind the token, like serve's
// /metrics.
func metricsHandler(reg *metrics.Registry, token string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", reg.Handler(token))
	return mux
}

// metricsToken returns the metrics token: MetricsToken, or the trimmed
// contents of MetricsTokenFile.
func (c Config) readMetricsToken() (string, error) {
	tok := c.MetricsToken
	if tok == "" && c.MetricsTokenFile != "" {
		b, err := os.ReadFile(c.MetricsTokenFile)
		if err != nil {
			return "", fmt.Errorf("gateway metrics token file: %w (metrics_token_unreadable)", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	if tok == "" {
		return "", errors.New("gateway metrics listener: set a metrics token (--metrics-token-file) (metrics_token_missing)")
	}
	return tok, nil
}
