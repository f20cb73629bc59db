package ingress

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RoutesPath is where serve mounts the Publisher's handler.
const RoutesPath = "/internal/gateway/routes"

// DefaultPollWait is how long the long-poll waits for a newer version.
const DefaultPollWait = 30 * time.Second

// Publisher holds the current route table in memory for gateways to read.
// The control plane calls Publish whenever the table in Postgres changes;
// ServeHTTP implements GET /internal/gateway/routes?after=<version>:
// it answers 200 with the table at once when the published version differs
// from after (newer, or older after a database restore: the control plane
// is the truth), and otherwise waits up to Wait for a Publish and answers
// 304 Not Modified when none came. Until the first Publish it answers 503,
// so a restarting control plane never hands gateways an empty table.
type Publisher struct {
	// Wait overrides DefaultPollWait (tests use a short one).
	Wait time.Duration

	mu        sync.Mutex
	published bool
	version   int64
	body      []byte
	changed   chan struct{} // closed and replaced on every Publish
}

// NewPublisher returns a Publisher with nothing published yet.
func NewPublisher() *Publisher {
	return &Publisher{changed: make(chan struct{})}
}

// Publish validates t and makes it the current table.
func (p *Publisher) Publish(t Table) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("publish route table version %d: %w", t.Version, err)
	}
	if t.Routes == nil {
		t.Routes = []Route{}
	}
	body, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("publish route table version %d: encode: %w", t.Version, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.published, p.version, p.body = true, t.Version, body
	close(p.changed)
	p.changed = make(chan struct{})
	return nil
}

// Version returns the published version and whether anything was published.
func (p *Publisher) Version() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version, p.published
}

func (p *Publisher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method_not_allowed: use GET", http.StatusMethodNotAllowed)
		return
	}
	after := int64(-1)
	if s := r.URL.Query().Get("after"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			http.Error(w, "after_invalid: the after parameter must be an integer version", http.StatusBadRequest)
			return
		}
		after = v
	}
	wait := p.Wait
	if wait <= 0 {
		wait = DefaultPollWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		p.mu.Lock()
		published, version, body, changed := p.published, p.version, p.body, p.changed
		p.mu.Unlock()
		if published && version != after {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Slipway-Routes-Version", strconv.FormatInt(version, 10))
			w.Write(body)
			return
		}
		select {
		case <-changed:
			continue
		case <-r.Context().Done():
			return
		case <-timer.C:
		}
		if !published {
			p.mu.Lock()
			published = p.published
			p.mu.Unlock()
		}
		if !published {
			http.Error(w, "routes_unavailable: the control plane has not loaded the route table yet", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNotModified)
		return
	}
}

// RequireToken wraps h so that only requests carrying
// "Authorization: Bearer <token>" reach it; serve uses it on the TCP
// listener, where other nodes' gateways connect. The unix socket needs no
// token: only what can open the file can connect.
func RequireToken(token string, h http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "gateway_token_invalid: send Authorization: Bearer <gateway token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
