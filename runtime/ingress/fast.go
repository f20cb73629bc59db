package ingress

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// On the plain-HTTP listeners (public and private), the requests the
// event loops hand over (loop.go) are served by fasthttp, which parses,
// routes and proxies an HTTP/1.1 request for about 40% less CPU than
// net/http's server and httputil.ReverseProxy; where there are no event
// loops (not on Linux) it serves the listeners itself. The TLS listener
// stays on net/http, for HTTP/2. The routing decision is the same
// function for both (Proxy.decide). A connection whose request needs what
// only the net/http path does — a protocol upgrade (websockets) or an ACME
// HTTP-01 challenge — is handed over to a net/http server from that
// request on (handoff).

const (
	// The longest request and response bodies held in memory; longer
	// (and chunked) bodies stream through. fasthttp reads up to 8 KiB of
	// a request body before the handler runs anyway.
	maxBufferedRequestBody  = 8 << 10
	maxBufferedResponseBody = 64 << 10
	// maxConnsPerEndpoint bounds the connections to one task; a request
	// waits up to the connect timeout for one beyond that.
	maxConnsPerEndpoint = 8192
	// maxHeaderBytes bounds a request's (and a response's) head.
	maxHeaderBytes = 16 << 10
	// acmeChallengePrefix is where ACME HTTP-01 challenges are asked.
	acmeChallengePrefix = "/.well-known/acme-challenge/"
)

// newFastServer returns the fasthttp server of one plain-HTTP listener.
// Requests it hands over go to handoff, served by net/http; acme says
// whether ACME HTTP-01 challenges are among them.
func (p *Proxy) newFastServer(l Listener, handoff *handoff, acme bool) *fasthttp.Server {
	return &fasthttp.Server{
		Handler:                      p.fastHandler(l, handoff, acme),
		NoDefaultServerHeader:        true,
		NoDefaultContentType:         true,
		DisablePreParseMultipartForm: true,
		// Bodies beyond what fasthttp has read with the head go to the
		// backend as they arrive.
		StreamRequestBody: true,
		ReadBufferSize:    maxHeaderBytes,
		// ReadTimeout bounds reading a request's head (and a body held in
		// memory); proxyFast lifts it for a streamed body.
		ReadTimeout: 10 * time.Second,
		IdleTimeout: 2 * time.Minute,
		// No write timeout: streams stay open as long as the application
		// keeps them open.
		Logger: fastLogger{p.log},
	}
}

func (p *Proxy) fastHandler(l Listener, handoff *handoff, acme bool) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if handsOver(ctx, acme) {
			handoff.take(ctx)
			return
		}
		uri := ctx.Request.URI()
		// The request goes to the backend as the client wrote it.
		uri.DisablePathNormalizing = true
		host := string(uri.Host())
		route := p.Lookup(l, host)
		if p.metrics == nil {
			p.answerFast(l, route, host, ctx)
			return
		}
		stats := p.unmatched
		if route != nil {
			stats = route.stats
		}
		p.answerFast(l, route, host, ctx)
		// A streamed response is counted when its head went out. The
		// time starts when fasthttp called the handler.
		stats.Observe(ctx.Response.StatusCode(), time.Since(ctx.Time()))
	}
}

// handsOver says whether a request goes to net/http: an upgrade, or an
// ACME challenge when acme is set, without a body (fasthttp has read part
// of a body already, and net/http must read the request from its start).
func handsOver(ctx *fasthttp.RequestCtx, acme bool) bool {
	if n := ctx.Request.Header.ContentLength(); n > 0 || n == -1 {
		return false
	}
	return len(ctx.Request.Header.Peek("Upgrade")) > 0 ||
		acme && bytes.HasPrefix(ctx.Request.Header.RequestURI(), []byte(acmeChallengePrefix))
}

// answerFast is answer for fasthttp.
func (p *Proxy) answerFast(l Listener, route *Route, host string, ctx *fasthttp.RequestCtx) {
	status, location, withURI := p.decide(l, route, host)
	switch {
	case status == http.StatusNotFound:
		ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
		fastText(ctx, status, notFoundText)
	case status != 0:
		if withURI {
			location += string(ctx.Request.URI().RequestURI())
		}
		ctx.Response.Header.Set("Location", location)
		fastText(ctx, status, redirectText(location))
	default:
		p.proxyFast(ctx, route, host)
	}
}

func fastText(ctx *fasthttp.RequestCtx, status int, text string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString(text)
}

// proxyFast sends the request to the route's backend and answers with its
// response, whose body (when long or chunked) streams to the client as it
// arrives: fasthttp flushes every chunk it reads, so server-sent events
// are not held back.
func (p *Proxy) proxyFast(ctx *fasthttp.RequestCtx, route *Route, host string) {
	u := p.ups.get(upstreamKey{service: route.Backend.Service, port: route.Backend.Port, timeouts: route.Timeouts})
	req, resp := &ctx.Request, &ctx.Response
	clientClose := req.Header.ConnectionClose()
	stripHopHeaders(&req.Header)
	setForwarded(req, ctx.RemoteIP())
	if req.IsBodyStream() {
		if n := req.Header.ContentLength(); n >= 0 && n <= maxBufferedRequestBody {
			// Already read with the head: in memory, the request can
			// be sent again when a pooled connection turns out closed.
			req.Body()
		} else {
			// An upload takes as long as it takes.
			ctx.Conn().SetReadDeadline(time.Time{})
		}
	}
	if err := u.doFast(req, resp, isIdempotentFast(req)); err != nil {
		status := failureStatus(err)
		p.log.Warn("proxy request failed", "host", host, "path", string(req.URI().PathOriginal()), "status", status, "err", err)
		resp.Reset()
		fastText(ctx, status, failureText(status))
		return
	}
	stripHopHeaders(&resp.Header)
	resp.Header.SetNoDefaultContentType(true)
	// Whether the backend keeps its connection is no matter of the
	// client's.
	resp.Header.ResetConnectionClose()
	if clientClose {
		resp.SetConnectionClose()
	}
	if streamsBody(resp) {
		// The response header timeout is over. (A body read whole gave
		// its connection back to the pool, where another request may
		// have it now; a streamed one holds it until the end.)
		if a, ok := resp.LocalAddr().(*backendAddr); ok {
			a.conn.SetReadDeadline(time.Time{})
		}
	}
}

// streamsBody says whether the HostClient left resp's body on the
// connection, to be read as the client takes it: a chunked body or one
// longer than it reads whole.
func streamsBody(resp *fasthttp.Response) bool {
	status := resp.StatusCode()
	if resp.SkipBody || status < 200 || status == http.StatusNoContent || status == http.StatusNotModified {
		return false
	}
	n := resp.Header.ContentLength()
	return n == -1 || n > maxBufferedResponseBody
}

// hopHeaders concern one connection, not the request: they do not pass
// the proxy (RFC 9110 7.6.1), nor do the headers Connection names.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Upgrade"}

// framing headers are never removed on a Connection header's say-so:
// without them the backend would read the message differently.
var framing = []string{"host", "content-length", "transfer-encoding"}

// header is what fasthttp's request and response headers share.
type header interface {
	Peek(key string) []byte
	Del(key string)
	ConnectionClose() bool
	PeekKeys() [][]byte
	PeekTrailerKeys() [][]byte
}

// stripHopHeaders removes the hop-by-hop headers from h. Most messages
// have none, which one look at h's header names tells without a Del per
// name (each of which normalises the name and walks every header).
func stripHopHeaders(h header) {
	if !h.ConnectionClose() && len(h.PeekTrailerKeys()) == 0 && !hasAnyHeader(h, hopHeaders) {
		return
	}
	if c := h.Peek("Connection"); len(c) > 0 {
		for _, name := range strings.Split(string(c), ",") {
			name = strings.TrimSpace(name)
			if name != "" && !containsFold(framing, name) {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// hasAnyHeader says whether h has a header (other than the ones fasthttp
// keeps apart: Host, Content-Type, Content-Length, User-Agent, cookies,
// trailers and Connection: close) named in names, in any case.
func hasAnyHeader(h header, names []string) bool {
	for _, key := range h.PeekKeys() {
		for _, name := range names {
			if len(key) == len(name) && strings.EqualFold(string(key), name) {
				return true
			}
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// replacedHeaders are the client's headers setForwarded drops: the
// forwarding headers, which the gateway sets itself, and Expect, which it
// has answered itself (100-continue).
var replacedHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Expect"}

// addrBuffers hold a client address while setForwarded copies it into the
// request (the header's setter would move a stack buffer to the heap).
var addrBuffers = sync.Pool{New: func() any { b := make([]byte, 0, len("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255")); return &b }}

var (
	xForwardedFor   = []byte("X-Forwarded-For")
	xForwardedHost  = []byte("X-Forwarded-Host")
	xForwardedProto = []byte("X-Forwarded-Proto")
	protoHTTP       = []byte("http")
)

// setForwarded replaces whatever X-Forwarded-* (and Forwarded) headers the
// client sent with the gateway's own, as ReverseProxy's SetXForwarded does,
// and drops Expect. The names are set in their canonical spelling, and
// the client's address is formatted into a pooled buffer.
func setForwarded(req *fasthttp.Request, client net.IP) {
	h := &req.Header
	if hasAnyHeader(h, replacedHeaders) {
		for _, name := range replacedHeaders {
			h.Del(name)
		}
	}
	if addr, ok := netip.AddrFromSlice(client); ok {
		buf := addrBuffers.Get().(*[]byte)
		*buf = addr.Unmap().AppendTo((*buf)[:0])
		h.SetCanonical(xForwardedFor, *buf)
		addrBuffers.Put(buf)
	}
	h.SetCanonical(xForwardedHost, h.Host())
	h.SetCanonical(xForwardedProto, protoHTTP)
}

func isIdempotentFast(req *fasthttp.Request) bool {
	h := &req.Header
	return h.IsGet() || h.IsHead() || h.IsOptions() || h.IsTrace() ||
		len(h.Peek("Idempotency-Key")) > 0 || len(h.Peek("X-Idempotency-Key")) > 0
}

// doFast sends req to one of u's backends, moving on to the next one when
// a connection cannot be made or, for an idempotent request held in
// memory, when the exchange broke before a response (not when it timed
// out). The HostClient itself sends a request held in memory again on
// a pooled connection the backend had closed.
func (u *upstream) doFast(req *fasthttp.Request, resp *fasthttp.Response, idempotent bool) error {
	<-u.resolved
	replayable := !req.IsBodyStream()
	return u.send(func(e *endpoint) error { return e.client.Do(req, resp) },
		func(err error, dialFailed bool) bool {
			return dialFailed || replayable && idempotent && !isTimeout(err)
		})
}

// newEndpoint returns the endpoint of a task address, with its fasthttp
// client.
func (u *upstream) newEndpoint(addr string) *endpoint {
	e := &endpoint{addr: addr}
	e.addrPort, _ = netip.ParseAddrPort(addr)
	e.client = &fasthttp.HostClient{
		Addr:                addr,
		Dial:                u.dialBackend,
		MaxConns:            maxConnsPerEndpoint,
		MaxConnWaitTimeout:  u.key.timeouts.connect(),
		MaxIdleConnDuration: idleConnTimeout,
		// The route's response header timeout; proxyFast lifts it once a
		// streamed body begins.
		ReadTimeout:         u.key.timeouts.responseHeader(),
		ReadBufferSize:      maxHeaderBytes,
		MaxResponseBodySize: maxBufferedResponseBody,
		StreamResponseBody:  true,
		// Only a connection closed before any answer is tried again (by
		// the HostClient, for a body in memory); everything else is
		// doFast's decision.
		RetryIf:                  func(*fasthttp.Request) bool { return false },
		DisablePathNormalizing:   true,
		NoDefaultUserAgentHeader: true,
	}
	return e
}

// dialBackend dials a task within the route's connect timeout. The
// connection's LocalAddr leads back to it, so that proxyFast can lift the
// response header timeout the HostClient set once a streamed body begins.
func (u *upstream) dialBackend(addr string) (net.Conn, error) {
	c, err := u.dialer.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &addressedConn{Conn: c, local: &backendAddr{Addr: c.LocalAddr(), conn: c}}, nil
}

type addressedConn struct {
	net.Conn
	local *backendAddr
}

func (c *addressedConn) LocalAddr() net.Addr { return c.local }

// backendAddr is a backend connection's local address, with the connection.
type backendAddr struct {
	net.Addr
	conn net.Conn
}

// handoff is a net.Listener of the connections the fasthttp server passes
// on to a net/http server, which reads them from the request fasthttp had
// read (written out again) on.
type handoff struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newHandoff(addr net.Addr) *handoff {
	return &handoff{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (h *handoff) Accept() (net.Conn, error) {
	select {
	case c := <-h.conns:
		return c, nil
	case <-h.done:
		return nil, net.ErrClosed
	}
}

func (h *handoff) Close() error {
	h.once.Do(func() { close(h.done) })
	return nil
}

func (h *handoff) Addr() net.Addr { return h.addr }

// take hands ctx's connection over, starting with its request.
func (h *handoff) take(ctx *fasthttp.RequestCtx) {
	head := bytes.Clone(ctx.Request.Header.Header())
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) {
		rc := &replayConn{Conn: c, pending: head, closed: make(chan struct{})}
		select {
		case h.conns <- rc:
		case <-h.done:
			return
		}
		// fasthttp closes the connection, and reuses the buffer c reads
		// through, when this returns: only after net/http is done.
		<-rc.closed
	})
}

// replayConn is a handed-over connection: its reads begin with the
// request head fasthttp had read.
type replayConn struct {
	net.Conn
	mu       sync.Mutex // held while reading, so Close waits for a read to end
	pending  []byte
	isClosed bool

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *replayConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isClosed {
		return 0, net.ErrClosed
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

func (c *replayConn) Close() error {
	c.closeOnce.Do(func() {
		// Unblock a read in progress, then wait for it to end.
		c.Conn.SetReadDeadline(aLongTimeAgo)
		c.mu.Lock()
		c.isClosed = true
		c.mu.Unlock()
		close(c.closed)
	})
	return nil
}

// fastLogger passes fasthttp's messages (mostly clients that broke off)
// to the log at debug level, as net/http's ErrorLog does.
type fastLogger struct{ log *slog.Logger }

func (l fastLogger) Printf(format string, args ...any) {
	l.log.Debug("http server: " + fmt.Sprintf(format, args...))
}
