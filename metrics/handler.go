package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the registry in Prometheus' text format to requests
// carrying "Authorization: Bearer <token>". With an empty token metrics are
// off and every request gets 404, as if the endpoint did not exist: an
// unprotected /metrics would tell anyone the names of every routed
// hostname. A missing or wrong token gets 401.
func (r *Registry) Handler(token string) http.Handler {
	if r == nil || token == "" {
		return http.NotFoundHandler()
	}
	// Comparing digests keeps the comparison constant-time even in the
	// token's length.
	want := sha256.Sum256([]byte(token))
	metrics := promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{
		// One failing collector (the queue query) must not hide the rest.
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      errorLog{r.logger},
	})
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got, ok := bearer(req.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="slipway-metrics"`)
			http.Error(w, "metrics_unauthorized: send Authorization: Bearer <metrics.token>", http.StatusUnauthorized)
			return
		}
		metrics.ServeHTTP(w, req)
	})
}

// bearer extracts the token of an "Authorization: Bearer <token>" header;
// the scheme is case-insensitive (RFC 9110).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// errorLog adapts slog to promhttp's Println logger.
type errorLog struct{ logger *slog.Logger }

func (l errorLog) Println(v ...any) {
	l.logger.Error("metrics collection failed", "error", strings.TrimSpace(fmt.Sprintln(v...)))
}
