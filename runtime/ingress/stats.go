package ingress

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/slipwayhq/slipway/metrics"
)

// statusRecorder remembers the status a handler answered with. Recorders
// are pooled: the request path allocates nothing for metrics.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

var recorders = sync.Pool{New: func() any { return new(statusRecorder) }}

func (s *statusRecorder) WriteHeader(code int) {
	// 1xx other than 101 are informational: the final status follows.
	if s.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush keeps streamed responses (server-sent events) flowing.
func (s *statusRecorder) Flush() {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

// Hijack is how ReverseProxy takes over an upgraded (websocket)
// connection; it answers 101 on the hijacked connection itself.
func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if s.status == 0 {
		s.status = http.StatusSwitchingProtocols
	}
	return http.NewResponseController(s.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the server's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// serveObserved answers like answer and records the request in the route's
// pre-resolved series.
func (p *Proxy) serveObserved(l Listener, route *Route, w http.ResponseWriter, r *http.Request) {
	stats := p.unmatched
	if route != nil {
		stats = route.stats
	}
	start := time.Now()
	rec := recorders.Get().(*statusRecorder)
	rec.ResponseWriter, rec.status = w, 0
	defer func() {
		status := rec.status
		if status == 0 {
			// Nothing written: net/http answers 200 with an empty body.
			status = http.StatusOK
		}
		rec.ResponseWriter = nil
		recorders.Put(rec)
		stats.Observe(status, time.Since(start))
	}()
	p.answer(l, route, rec, r)
}

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
