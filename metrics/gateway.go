package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// GatewayRoute holds one route's gateway series, resolved once when the
// gateway loads its route table, so that recording a request is an atomic
// increment and a histogram observation: no label hashing, map lookup or
// string building on the request path. A nil *GatewayRoute records
// nothing.
type GatewayRoute struct {
	host     string
	requests *prometheus.CounterVec
	latency  prometheus.Observer
	// byStatus holds the counter of each status code 100-599, and last
	// the one of other codes, each resolved on its first request.
	byStatus [501]atomic.Pointer[prometheus.Counter]
}

// gatewayRoutes caches the handles by host label, so a new route table
// keeps counting in the same series.
type gatewayRoutes struct {
	mu     sync.Mutex
	byHost map[string]*GatewayRoute
}

// GatewayRoute returns the handle of a route's hostname as configured
// (a wildcard stays "*.example.com"); "" is the handle of requests that
// matched no route. Call it when a route table is loaded, not per request.
func (r *Registry) GatewayRoute(host string) *GatewayRoute {
	if r == nil {
		return nil
	}
	host = r.hosts.label(host)
	r.gatewayHandles.mu.Lock()
	defer r.gatewayHandles.mu.Unlock()
	if g := r.gatewayHandles.byHost[host]; g != nil {
		return g
	}
	if r.gatewayHandles.byHost == nil {
		r.gatewayHandles.byHost = map[string]*GatewayRoute{}
	}
	g := &GatewayRoute{
		host:     host,
		requests: r.gatewayRequests,
		latency:  r.gatewayLatency.WithLabelValues(host),
	}
	r.gatewayHandles.byHost[host] = g
	return g
}

// Observe records one answered request with its status code and duration.
func (g *GatewayRoute) Observe(status int, d time.Duration) {
	if g == nil {
		return
	}
	g.counter(status).Inc()
	g.latency.Observe(d.Seconds())
}

func (g *GatewayRoute) counter(status int) prometheus.Counter {
	i := status - 100
	if status < 100 || status > 599 {
		i = len(g.byStatus) - 1
	}
	slot := &g.byStatus[i]
	if c := slot.Load(); c != nil {
		return *c
	}
	c := g.requests.WithLabelValues(g.host, statusLabel(status))
	slot.Store(&c)
	return c
}
