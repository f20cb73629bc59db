package ingress

import (
	"context"
	"slices"
	"sync"
	"time"
)

// liveness follows which routes of the table the gateway can serve, for
// the control plane (reportState): a redirect at once, a backend route
// once a connection to one of its tasks was made — by a request, or by
// the probe liveness starts for every backend route that has not been
// live yet. A deployment's routes step waits for that (package routelive)
// so that it never reports success while the gateway still answers 404.
type liveness struct {
	ctx context.Context
	p   *Proxy
	// changed is poked when a route becomes live (the report goes out at
	// once); set before the first table.
	changed chan<- struct{}

	mu      sync.Mutex
	live    map[upstreamKey]bool
	probing map[upstreamKey]context.CancelFunc
}

// probeEvery is how often a probe tries to connect to a route's tasks.
const probeEvery = 500 * time.Millisecond

func newLiveness(ctx context.Context, p *Proxy) *liveness {
	lv := &liveness{ctx: ctx, p: p, live: map[upstreamKey]bool{}, probing: map[upstreamKey]context.CancelFunc{}}
	p.ups.onConnected = lv.connected
	return lv
}

func keyOf(r *Route) upstreamKey {
	return upstreamKey{service: r.Backend.Service, port: r.Backend.Port, timeouts: r.Timeouts}
}

// track follows the backends of t from now on: probes start for those not
// live yet, and backends that left the table are forgotten.
func (lv *liveness) track(t *Table) {
	want := make(map[upstreamKey]bool, len(t.Routes))
	for i := range t.Routes {
		if r := &t.Routes[i]; r.Backend != nil {
			want[keyOf(r)] = true
		}
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	for k := range lv.live {
		if !want[k] {
			delete(lv.live, k)
		}
	}
	for k, cancel := range lv.probing {
		if !want[k] {
			cancel()
			delete(lv.probing, k)
		}
	}
	for k := range want {
		if lv.live[k] || lv.probing[k] != nil {
			continue
		}
		ctx, cancel := context.WithCancel(lv.ctx)
		lv.probing[k] = cancel
		go lv.probe(ctx, k)
	}
}

// connected records that a connection to one of key's tasks was made.
func (lv *liveness) connected(key upstreamKey) {
	lv.mu.Lock()
	if lv.live[key] {
		lv.mu.Unlock()
		return
	}
	lv.live[key] = true
	if cancel := lv.probing[key]; cancel != nil {
		cancel()
		delete(lv.probing, key)
	}
	lv.mu.Unlock()
	if lv.changed != nil {
		poke(lv.changed)
	}
}

func (lv *liveness) isLive(key upstreamKey) bool {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	return lv.live[key]
}

// probe connects to key's tasks, one after another, until one accepts.
func (lv *liveness) probe(ctx context.Context, key upstreamKey) {
	u := lv.p.ups.get(key)
	select {
	case <-u.resolved:
	case <-ctx.Done():
		return
	}
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for !lv.isLive(key) {
		// A request's connection may have come first (connected).
		u = lv.p.ups.get(key)
		if e := u.pick(nil); e != nil {
			c, err := u.dialer.DialContext(ctx, "tcp", e.addr)
			if err == nil {
				c.Close()
				u.connected()
				lv.connected(key)
				return
			}
			if ctx.Err() == nil && isDialError(err) {
				e.markDown()
				u.refresh()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// hostnames returns the hostnames of t the gateway can serve, sorted.
func (lv *liveness) hostnames(t *Table) []string {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	out := make([]string, 0, len(t.Routes))
	for i := range t.Routes {
		r := &t.Routes[i]
		if r.Backend == nil || lv.live[keyOf(r)] {
			out = append(out, r.Hostname)
		}
	}
	slices.Sort(out)
	return out
}
