package ingress

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/slipwayhq/slipway/metrics"
)

// Listener says which kind of listener a request arrived on; it decides
// which routes are visible and whether plain HTTP is redirected to HTTPS.
type Listener int

const (
	// ListenerHTTP is the public plain-HTTP listener (port 80).
	ListenerHTTP Listener = iota
	// ListenerHTTPS is the public TLS listener (port 443).
	ListenerHTTPS
	// ListenerPrivate is the private listener (a VPN address): it serves
	// private and public routes.
	ListenerPrivate
)

// Proxy routes requests by Host to backends and answers redirects. It is
// safe for concurrent use; SetTable swaps the table atomically.
type Proxy struct {
	log     *slog.Logger
	table   atomic.Pointer[Table]
	matcher atomic.Pointer[Matcher]
	ups     *upstreams

	// hasCertificate reports whether HTTPS is available for a hostname,
	// so plain HTTP for it is redirected. Nil means never.
	hasCertificate func(host string) bool

	// metrics, when set, records every request in its route's series
	// (Route.stats, resolved by SetTable); unmatched counts the rest.
	metrics   *metrics.Registry
	unmatched *metrics.GatewayRoute
}

// ObserveWith records every request from now on in reg's
// slipway_gateway_* series. Call it before the first SetTable.
func (p *Proxy) ObserveWith(reg *metrics.Registry) {
	p.metrics = reg
	p.unmatched = reg.GatewayRoute("")
}

// NewProxy returns a Proxy with an empty table. Its background resolvers
// stop when ctx ends. A nil resolver means net.DefaultResolver.
func NewProxy(ctx context.Context, log *slog.Logger, resolver Resolver) *Proxy {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	p := &Proxy{log: log}
	p.ups = &upstreams{ctx: ctx, resolver: resolver, log: log, proxy: p.reverseProxy}
	empty := &Table{}
	p.table.Store(empty)
	p.matcher.Store(NewMatcher(empty))
	return p
}

// SetTable validates t and serves it from now on; on error the previous
// table stays.
func (p *Proxy) SetTable(t Table) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if p.metrics != nil {
		for i := range t.Routes {
			t.Routes[i].stats = p.metrics.GatewayRoute(t.Routes[i].Hostname)
		}
	}
	p.matcher.Store(NewMatcher(&t))
	p.table.Store(&t)
	return nil
}

// Table returns the table being served.
func (p *Proxy) Table() Table { return *p.table.Load() }

// Lookup returns the route a listener serves for host, or nil.
func (p *Proxy) Lookup(l Listener, host string) *Route {
	r := p.matcher.Load().Match(host)
	if r == nil || (r.Visibility != VisibilityPublic && l != ListenerPrivate) {
		return nil
	}
	return r
}

// Handler returns the http.Handler for one listener.
func (p *Proxy) Handler(l Listener) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.serve(l, w, r)
	})
}

func (p *Proxy) serve(l Listener, w http.ResponseWriter, r *http.Request) {
	route := p.Lookup(l, r.Host)
	if p.metrics != nil {
		p.serveObserved(l, route, w, r)
		return
	}
	p.answer(l, route, w, r)
}

// answer serves a request whose route (nil: none) was looked up.
func (p *Proxy) answer(l Listener, route *Route, w http.ResponseWriter, r *http.Request) {
	status, location, withURI := p.decide(l, route, r.Host)
	switch {
	case status == http.StatusNotFound:
		notFound(w)
	case status != 0:
		if withURI {
			location += r.URL.RequestURI()
		}
		redirect(w, location, status)
	default:
		u := p.ups.get(upstreamKey{service: route.Backend.Service, port: route.Backend.Port, timeouts: route.Timeouts})
		u.proxy.ServeHTTP(w, r)
	}
}

// decide is the routing decision both servers share: status 404 when no
// route serves the request, a redirect status and its location (to which
// the request URI is appended when withURI), or 0 to proxy it to the
// route's backend.
func (p *Proxy) decide(l Listener, route *Route, host string) (status int, location string, withURI bool) {
	if route == nil {
		return http.StatusNotFound, "", false
	}
	if l == ListenerHTTP && p.hasCertificate != nil && p.hasCertificate(NormalizeHost(host)) {
		return http.StatusPermanentRedirect, "https://" + NormalizeHost(host), true
	}
	if rd := route.Redirect; rd != nil {
		status := rd.Status
		if status == 0 {
			status = http.StatusPermanentRedirect
		}
		if rd.PreservePath {
			return status, strings.TrimSuffix(rd.To, "/"), true
		}
		return status, rd.To, false
	}
	return 0, "", false
}

// reverseProxy returns the ReverseProxy of one upstream. Each upstream has
// its own, whose transport is that upstream's balancer, so a request
// needs no per-request context value (and no copy of the request) to find
// its backends.
func (p *Proxy) reverseProxy(transport http.RoundTripper) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			// The balancer replaces the host with a task address.
			pr.Out.URL.Host = "backend"
			pr.Out.Host = pr.In.Host
			// Rewrite mode has already dropped the client's own
			// X-Forwarded-* headers: only ours reach the backend.
			pr.SetXForwarded()
		},
		Transport:    transport,
		BufferPool:   bufferPool{},
		ErrorHandler: p.proxyError,
		// FlushInterval 0: ReverseProxy already flushes every write of
		// responses without a Content-Length and of text/event-stream,
		// which is what streams and SSE need, while ordinary responses
		// are not flushed write by write.
	}
}

// The texts of the answers the gateway gives itself.
const notFoundText = "404 not found: no application is routed at this address\n"

func redirectText(to string) string { return "Redirecting to " + to + "\n" }

func failureText(status int) string {
	return http.StatusText(status) + ": the application did not answer\n"
}

// failureStatus is the status of a request no backend answered: 504 when
// it timed out, 502 otherwise.
func failureStatus(err error) int {
	if isTimeout(err) {
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}

func redirect(w http.ResponseWriter, to string, status int) {
	w.Header().Set("Location", to)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, redirectText(to))
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	io.WriteString(w, notFoundText)
}

func (p *Proxy) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		// The client went away; there is nobody to answer.
		return
	}
	status := failureStatus(err)
	p.log.Warn("proxy request failed", "host", r.Host, "path", r.URL.Path, "status", status, "err", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, failureText(status))
}

var errNoBackend = errors.New("no running backend for this route")

// balancer is an upstream's RoundTripper: it picks a task address of the
// upstream and moves on to the next address when a connection cannot be
// made (or, for idempotent requests, breaks before a response), so a task
// that is going away costs no request.
type balancer struct{ u *upstream }

const maxAttempts = 3

func (b balancer) RoundTrip(req *http.Request) (*http.Response, error) {
	u := b.u
	select {
	case <-u.resolved:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	var body *countingBody
	if req.Body != nil && req.Body != http.NoBody {
		// Transport closes the body on error; keep it open so a request
		// whose body was never read can go to another backend.
		body = &countingBody{rc: req.Body}
		req.Body = body
		defer body.rc.Close()
	}
	idempotent := isIdempotent(req)
	direct := canGoDirect(req, idempotent)
	var resp *http.Response
	err := u.send(func(e *endpoint) (err error) {
		req.URL.Host = e.addr
		if direct {
			resp, err = u.roundTripDirect(req, e)
		} else {
			resp, err = u.transport.RoundTrip(req)
		}
		return err
	}, func(err error, dialFailed bool) bool {
		unsent := body == nil || body.n.Load() == 0
		return req.Context().Err() == nil && unsent && (dialFailed || idempotent && !isTimeout(err))
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// send tries a request (one) on u's backends in turn: a backend that
// cannot be connected to is marked down, and the request moves on to the
// next backend after any failure again allows, up to maxAttempts.
func (u *upstream) send(one func(*endpoint) error, again func(err error, dialFailed bool) bool) error {
	var triedBuf [maxAttempts]*endpoint
	tried := triedBuf[:0]
	for {
		e := u.pick(tried)
		if e == nil {
			u.refresh()
			return errNoBackend
		}
		err := one(e)
		if err == nil {
			return nil
		}
		dialFailed := isDialError(err)
		if dialFailed {
			e.markDown()
			u.refresh()
		}
		tried = append(tried, e)
		if len(tried) >= maxAttempts || !again(err, dialFailed) {
			return err
		}
	}
}

func isIdempotent(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return r.Header.Get("Idempotency-Key") != "" || r.Header.Get("X-Idempotency-Key") != ""
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// isTimeout also recognises fasthttp's timeout errors, which have a
// Timeout method but are no net.Error.
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

type countingBody struct {
	rc io.ReadCloser
	n  atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func (b *countingBody) Close() error { return nil }

var buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// bufferPool reuses copy buffers between requests instead of allocating
// 32 KiB per response.
type bufferPool struct{}

func (bufferPool) Get() []byte  { return *(buffers.Get().(*[]byte)) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }
