package ingress

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
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

type endpoint struct {
	addr      string
	addrPort  netip.AddrPort // addr, for the event loops' dials
	downUntil atomic.Int64   // unix nanoseconds
	pool      connPool       // the direct path's idle connections

	// client proxies the fasthttp server's requests.
	client *fasthttp.HostClient
}

// close drops e's idle connections, when the task is gone or the upstream
// stopped (the direct path's pool also refuses new ones; the HostClient
// closes any later ones when they idle out).
func (e *endpoint) close() {
	e.pool.closeAll()
	e.client.CloseIdleConnections()
}

// upstream is the resolved, balanced set of task addresses of one service
// port, with its own http.Transport so connection pooling and the
// per-route timeouts are per backend.
type upstream struct {
	key       upstreamKey
	resolver  Resolver
	log       *slog.Logger
	transport *http.Transport
	dialer    *net.Dialer
	proxy     *httputil.ReverseProxy // with this upstream's balancer

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
	u.dialer = &net.Dialer{Timeout: key.timeouts.connect(), KeepAlive: 30 * time.Second}
	u.transport = &http.Transport{
		DialContext:           u.dialer.DialContext,
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       60 * time.Second,
		ResponseHeaderTimeout: key.timeouts.responseHeader(),
		ExpectContinueTimeout: time.Second,
		// Bodies pass through as they are; the client negotiated encoding
		// with the backend, not with us.
		DisableCompression: true,
		WriteBufferSize:    32 << 10,
		ReadBufferSize:     32 << 10,
	}
	empty := []*endpoint{}
	u.endpoints.Store(&empty)
	u.lastUsed.Store(time.Now().UnixNano())
	return u
}

// run re-resolves the service every resolveEvery, and at once when a dial
// failed, until ctx ends or nobody used the upstream for a while.
func (u *upstream) run(ctx context.Context, done func()) {
	defer done()
	defer u.transport.CloseIdleConnections()
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
			next = append(next, u.newEndpoint(hp))
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

func (e *endpoint) markDown() {
	e.downUntil.Store(time.Now().Add(markDownFor).UnixNano())
}

// upstreams holds every upstream in use, created on first request.
type upstreams struct {
	ctx      context.Context
	resolver Resolver
	log      *slog.Logger
	// proxy makes an upstream's ReverseProxy around its balancer.
	proxy func(http.RoundTripper) *httputil.ReverseProxy

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
	u.proxy = us.proxy(balancer{u})
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
