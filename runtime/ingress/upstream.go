package ingress

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Resolver looks up the task addresses of a service. net.DefaultResolver
// satisfies it; inside the gateway container Docker's embedded DNS answers
// the dnsrr service name with every running task's address.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

const (
	// resolveEvery bounds how long a departed task can stay in rotation and
	// how long a new replica waits for traffic.
	resolveEvery = 2 * time.Second
	// markDownFor is how long a backend that refused a connection is
	// skipped, unless every backend is down.
	markDownFor = 5 * time.Second
	// idleUpstreamAfter stops resolving a backend set nobody asked for.
	idleUpstreamAfter = 2 * time.Minute
)

// upstreamKey identifies one backend set: requests with the same key share
// the resolved addresses and the connection pool.
type upstreamKey struct {
	service  string
	port     int
	timeouts Timeouts
}

// upstream is the resolved, balanced set of task addresses of one service
// port with the route's timeouts; each address (endpoint) has its pool.
type upstream struct {
	key      upstreamKey
	resolver Resolver
	log      *slog.Logger
	dialer   *net.Dialer
	// answered: a connection to one of the tasks was made.
	answered atomic.Bool
	// onEndpointClosed and onConnected are the upstreams' hooks.
	onEndpointClosed func()
	onConnected      func(upstreamKey)

	endpoints atomic.Pointer[[]*endpoint]
	next      atomic.Uint64
	lastUsed  atomic.Int64

	mu       sync.Mutex
	resolved chan struct{} // closed after the first resolution attempt
	kick     chan struct{}
	lastErr  error
}

func newUpstream(key upstreamKey, resolver Resolver, log *slog.Logger) *upstream {
	u := &upstream{
		key:      key,
		resolver: resolver,
		log:      log.With("service", key.service, "port", key.port),
		resolved: make(chan struct{}),
		kick:     make(chan struct{}, 1),
	}
	u.dialer = &net.Dialer{Timeout: key.timeouts.connect(), KeepAlive: backendKeepAlive}
	empty := []*endpoint{}
	u.endpoints.Store(&empty)
	u.lastUsed.Store(time.Now().UnixNano())
	return u
}

// connected records that a connection to one of u's tasks was made.
func (u *upstream) connected() {
	if !u.answered.Load() && u.answered.CompareAndSwap(false, true) && u.onConnected != nil {
		u.onConnected(u.key)
	}
}

// run re-resolves the service every resolveEvery, and at once when a dial
// failed, until ctx ends or nobody used the upstream for a while; it also
// closes pooled connections idle too long.
func (u *upstream) run(ctx context.Context, done func()) {
	defer done()
	defer func() {
		for _, e := range *u.endpoints.Load() {
			e.close()
		}
	}()
	t := time.NewTicker(resolveEvery)
	defer t.Stop()
	u.resolve(ctx)
	close(u.resolved)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-u.kick:
		}
		if time.Since(time.Unix(0, u.lastUsed.Load())) > idleUpstreamAfter {
			return
		}
		now := time.Now()
		for _, e := range *u.endpoints.Load() {
			e.idle.expire(now)
		}
		u.resolve(ctx)
	}
}

func (u *upstream) resolve(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	addrs, err := u.resolver.LookupHost(rctx, u.key.service)
	cancel()
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			// The service has no running task (or is gone): nothing to send to.
			addrs = nil
		} else {
			// A resolver hiccup must not empty a working backend set.
			if u.lastErr == nil {
				u.log.Warn("resolve backend", "err", err)
			}
			u.lastErr = err
			return
		}
	}
	u.lastErr = err
	slices.Sort(addrs)
	old := *u.endpoints.Load()
	if len(old) == len(addrs) && slices.EqualFunc(old, addrs, func(e *endpoint, a string) bool { return e.addr == net.JoinHostPort(a, strconv.Itoa(u.key.port)) }) {
		return
	}
	byAddr := make(map[string]*endpoint, len(old))
	for _, e := range old {
		byAddr[e.addr] = e
	}
	next := make([]*endpoint, 0, len(addrs))
	for _, a := range addrs {
		hp := net.JoinHostPort(a, strconv.Itoa(u.key.port))
		if e := byAddr[hp]; e != nil {
			next = append(next, e)
		} else {
			next = append(next, newEndpoint(u, hp))
		}
	}
	u.endpoints.Store(&next)
	for _, e := range old {
		if !slices.Contains(next, e) {
			e.close()
		}
	}
	u.log.Debug("backends changed", "addrs", addrs)
}

// refresh asks for a resolution now, without waiting for it.
func (u *upstream) refresh() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// pick returns the next healthy endpoint in round-robin order, skipping
// those in tried and those marked down; when every endpoint is marked down
// it still returns one, because a stale mark is better than a certain 502.
func (u *upstream) pick(tried []*endpoint) *endpoint {
	eps := *u.endpoints.Load()
	n := len(eps)
	if n == 0 {
		return nil
	}
	var now int64 // read from the clock only once an endpoint was ever marked down
	start := u.next.Add(1)
	var fallback *endpoint
	for i := range n {
		e := eps[(start+uint64(i))%uint64(n)]
		if slices.Contains(tried, e) {
			continue
		}
		if until := e.downUntil.Load(); until != 0 {
			if now == 0 {
				now = time.Now().UnixNano()
			}
			if until > now {
				if fallback == nil {
					fallback = e
				}
				continue
			}
		}
		return e
	}
	return fallback
}

// upstreams holds every upstream in use, created on first request.
type upstreams struct {
	ctx      context.Context
	resolver Resolver
	log      *slog.Logger
	// onEndpointClosed is called when an endpoint closed (the event loops
	// drain their idle connections to it); onConnected when an upstream's
	// first connection was made (route liveness). Both are set before
	// serving.
	onEndpointClosed func()
	onConnected      func(upstreamKey)

	// set is read on every request, so lookups take no lock; mu only
	// serialises creation.
	set sync.Map // upstreamKey → *upstream
	mu  sync.Mutex
}

func (us *upstreams) get(key upstreamKey) *upstream {
	if v, ok := us.set.Load(key); ok {
		u := v.(*upstream)
		u.touch()
		return u
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	if v, ok := us.set.Load(key); ok {
		return v.(*upstream)
	}
	u := newUpstream(key, us.resolver, us.log)
	u.onEndpointClosed, u.onConnected = us.onEndpointClosed, us.onConnected
	us.set.Store(key, u)
	go u.run(us.ctx, func() { us.set.CompareAndDelete(key, u) })
	return u
}

// touch records use at most once a second: a store on every request would
// bounce the cache line between cores.
func (u *upstream) touch() {
	now := time.Now().UnixNano()
	if now-u.lastUsed.Load() > int64(time.Second) {
		u.lastUsed.Store(now)
	}
}
