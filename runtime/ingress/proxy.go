package ingress

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
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

// Proxy routes requests by host to backends and answers redirects and
// 404s. It is safe for concurrent use; SetTable swaps the table
// atomically. The event loops (loop.go) and net/http (handler.go) both
// serve requests with it.
type Proxy struct {
	log     *slog.Logger
	table   atomic.Pointer[Table]
	matcher atomic.Pointer[Matcher]
	ups     *upstreams
	limits  Limits
	live    *liveness

	// hasCertificate reports whether HTTPS is available for a hostname,
	// so plain HTTP for it is redirected. Nil means never.
	hasCertificate func(host string) bool
	// acme answers ACME HTTP-01 challenges on the plain-HTTP listener;
	// nil without ACME.
	acme interface {
		HandleHTTPChallenge(http.ResponseWriter, *http.Request) bool
	}

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

// NewProxy returns a Proxy with an empty table and the default Limits. Its
// background resolvers stop when ctx ends. A nil resolver means
// net.DefaultResolver.
func NewProxy(ctx context.Context, log *slog.Logger, resolver Resolver) *Proxy {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	p := &Proxy{log: log}
	p.ups = &upstreams{ctx: ctx, resolver: resolver, log: log}
	p.live = newLiveness(ctx, p)
	empty := &Table{}
	p.table.Store(empty)
	p.matcher.Store(NewMatcher(empty))
	return p
}

// SetLimits sets the body limits and trusted proxies; call it before
// serving.
func (p *Proxy) SetLimits(l Limits) { p.limits = l }

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
	p.live.track(&t)
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

// upstream returns the backend set of a route with a backend.
func (p *Proxy) upstream(r *Route) *upstream {
	return p.ups.get(upstreamKey{service: r.Backend.Service, port: r.Backend.Port, timeouts: r.Timeouts})
}

// decide is the routing decision both ways of serving share: the answer
// the gateway gives itself — a 404 when no route serves host, a redirect
// (to which uri, the request's target in origin form, is appended when
// the route preserves paths) — or proxy true to send the request to the
// route's backend.
func decide[T text](p *Proxy, l Listener, route *Route, host string, uri T) (rep reply, proxy bool) {
	if route == nil {
		return notFoundReply(), false
	}
	if l == ListenerHTTP && p.hasCertificate != nil && p.hasCertificate(NormalizeHost(host)) {
		return redirectReply(http.StatusPermanentRedirect, "https://"+NormalizeHost(host)+string(uri)), false
	}
	if rd := route.Redirect; rd != nil {
		status := rd.Status
		if status == 0 {
			status = http.StatusPermanentRedirect
		}
		if rd.PreservePath {
			return redirectReply(status, strings.TrimSuffix(rd.To, "/")+string(uri)), false
		}
		return redirectReply(status, rd.To), false
	}
	return reply{}, true
}

// observe records a request in its route's series.
func (p *Proxy) stats(route *Route) *metrics.GatewayRoute {
	if p.metrics == nil {
		return nil
	}
	if route == nil {
		return p.unmatched
	}
	return route.stats
}
