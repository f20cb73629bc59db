package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Control is a net.Dialer Control function: it checks the address the
// socket is about to connect to, after every resolution, so nothing a
// resolver says in between can change where the connection goes.
func (p *Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%s: cannot check %q: %w", Code, address, err)
	}
	return p.Check("", ap.Addr())
}

// Dialer returns a net.Dialer whose connections pass Control.
func (p *Policy) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.Control}
}

// DialContext resolves address's host with the policy's resolver, refuses
// it when every address it resolves to is refused, and connects to the
// first allowed address that answers; each connection passes Control as
// well. Its errors name the host as written.
func (p *Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = p.lookup(ctx, host); err != nil {
		return nil, err
	}
	d := p.Dialer()
	var first error
	for _, a := range addrs {
		if err := p.Check(host, a); err != nil {
			first = keep(first, err)
			continue
		}
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		var refusal *Error
		if errors.As(err, &refusal) {
			refusal.Host = host
			err = refusal
		}
		first = keep(first, err)
	}
	if first == nil {
		first = fmt.Errorf("%s resolves to no address", host)
	}
	return nil, first
}

// keep prefers a refusal to any other error, then the first.
func keep(have, next error) error {
	var e *Error
	if have == nil || (!errors.As(have, &e) && errors.As(next, &e)) {
		return next
	}
	return have
}

// Dial is DialContext without a context, for callers that have none.
func (p *Policy) Dial(network, address string) (net.Conn, error) {
	return p.DialContext(context.Background(), network, address)
}

// Transport returns an HTTP transport whose every connection goes through
// DialContext. It reads no proxy from the environment: through a proxy the
// check would see the proxy's address, not the destination's. It keeps no
// idle connections, so a connection made under one policy is never reused
// under another.
func (p *Policy) Transport() *http.Transport {
	return &http.Transport{
		DialContext:           p.DialContext,
		ForceAttemptHTTP2:     true,
		DisableKeepAlives:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

type contextKey struct{}

// WithPolicy returns ctx carrying p, for code that dials through a shared
// client (FromContext).
func WithPolicy(ctx context.Context, p *Policy) context.Context {
	return context.WithValue(ctx, contextKey{}, p)
}

// FromContext returns the policy ctx carries, or the strict one.
func FromContext(ctx context.Context) *Policy {
	p, _ := ctx.Value(contextKey{}).(*Policy)
	return OrStrict(p)
}

// ContextTransport is an HTTP transport for a client shared by operations
// under different policies: each connection is checked by the policy its
// request's context carries (WithPolicy), the strict one when none.
func ContextTransport() *http.Transport {
	t := strict.Transport()
	t.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
		return FromContext(ctx).DialContext(ctx, network, address)
	}
	return t
}
