//go:build linux

package ingress

import (
	"bytes"

	"io"
	"net/http"
	"time"

	"golang.org/x/sys/unix"

	"github.com/slipwayhq/slipway/runtime/ingress/internal/h1"
)

// exchange is a client's request in flight on an event loop: the request
// as the backend gets it (kept whole, so it can go to another task), the
// backends tried, and how far the response has come.
type exchange struct {
	client  *loopConn
	backend *loopConn
	route   *Route
	u       *upstream
	host    string
	target  []byte
	req     []byte
	start   time.Time

	idempotent  bool
	head        bool // a HEAD request: the response has no body
	clientClose bool

	tried   [maxAttempts]*endpoint
	ntried  int
	retries int // on pooled connections the backend had closed

	gotBytes bool // the backend has answered something
	sentHead bool // the response head went to the client
	responseFraming
	backendClose bool
}

// clientReadable reads what the client sent and starts the next request
// unless one is in flight (pipelined requests wait in c.in).
func (l *loop) clientReadable(c *loopConn) {
	if c.lingering {
		l.drainLingering(c)
		return
	}
	l.fill(c, maxClientBuffered)
	if c.closed || c.x != nil || len(c.out) > 0 {
		return
	}
	l.nextRequest(c)
}

// clientFlushed resumes what waited for the client to take its bytes: the
// backend's response, or the next request.
func (l *loop) clientFlushed(c *loopConn) {
	if x := c.x; x != nil {
		if b := x.backend; b != nil && b.readable {
			l.backendReadable(b)
		}
		return
	}
	l.nextRequest(c)
}

// nextRequest starts the request at the start of c.in, when it is whole.
func (l *loop) nextRequest(c *loopConn) {
	if c.readable {
		l.fill(c, maxClientBuffered)
	}
	if c.closed || c.awaitingBackends {
		return
	}
	if len(c.in) == 0 {
		if c.eof || l.srv.stopping.Load() {
			l.closeClient(c)
			return
		}
		c.waitingHead, c.waitingBody, c.bodySeen = false, false, 0
		l.setDeadline(c, clientIdleTimeout)
		return
	}
	r := &l.req
	err := h1.ParseRequest(c.in, maxHeaderBytes, r)
	if err == h1.ErrIncomplete || err == nil && len(c.in) < r.HeadLen+int(max(0, r.ContentLength)) && l.servable(c, r) {
		if c.eof {
			l.closeClient(c)
			return
		}
		switch {
		case err == nil:
			// The head is in and a small body is coming: the body idle
			// timeout runs from each arrival.
			if len(c.in) != c.bodySeen {
				c.bodySeen, c.waitingBody = len(c.in), true
				l.setDeadline(c, l.proxy.limits.bodyIdle())
			}
		case !c.waitingHead:
			c.waitingHead = true
			l.setDeadline(c, clientHeadTimeout)
		}
		return
	}
	switch {
	case err != nil:
		// Never read by a more lenient parser: refused, and the
		// connection closed.
		l.refuse(c, h1.Status(err))
		return
	case l.proxy.limits.bodyTooLarge(r.ContentLength):
		l.refuse(c, http.StatusRequestEntityTooLarge)
		return
	case !l.servable(c, r):
		l.handOver(c)
		return
	}
	host := string(r.Host)
	route := l.proxy.Lookup(c.ln.kind, host)
	if rep, proxy := decide(l.proxy, c.ln.kind, route, host, r.Path); !proxy {
		l.answer(c, r, route, rep)
		return
	}
	u := l.proxy.upstream(route)
	select {
	case <-u.resolved:
	default:
		// A backend set nobody asked for lately: the request waits for
		// its first resolution (at most a couple of seconds), off the
		// loop, and is read again when it is done.
		c.awaitingBackends = true
		go l.afterResolution(u, c)
		return
	}
	if hook := l.srv.beforeBegin.Load(); hook != nil {
		(*hook)(host)
	}
	l.begin(c, r, route, u, host)
}

// servable says whether the loop serves r itself (a request the strict
// parser accepted).
func (l *loop) servable(c *loopConn, r *h1.Request) bool {
	return r.Minor == 1 && !r.TransferEncoding && !r.Upgrade && !r.Expect &&
		r.ContentLength <= maxBufferedRequestBody && r.Authority == nil &&
		string(r.Method) != http.MethodConnect &&
		!(c.ln.acme && bytes.HasPrefix(r.Target, []byte(acmeChallengePrefix)))
}

// answer gives the gateway's own answer to r (a 404, a redirect), whose
// body (if any) was read whole and is dropped with it.
func (l *loop) answer(c *loopConn, r *h1.Request, route *Route, rep reply) {
	closing := r.Close || l.srv.stopping.Load()
	l.consume(c, r.HeadLen+int(max(0, r.ContentLength)))
	c.waitingHead, c.waitingBody, c.bodySeen = false, false, 0
	if stats := l.proxy.stats(route); stats != nil {
		stats.Observe(rep.status, 0)
	}
	l.scratch = rep.appendTo(l.scratch[:0], closing)
	l.send(c, l.scratch)
	switch {
	case c.closed:
	case closing:
		c.closeWhenFlushed = true
		if len(c.out) == 0 {
			l.closeClient(c)
		}
	case len(c.out) == 0:
		l.nextRequest(c)
	}
}

// begin rewrites the request at the start of c.in for the backend and
// sends it.
func (l *loop) begin(c *loopConn, r *h1.Request, route *Route, u *upstream, host string) {
	x := &c.xchg
	*x = exchange{
		client: c, route: route, u: u, host: host, start: l.now,
		target: append(x.target[:0], r.Target...),
		req:    x.req[:0],
		head:   string(r.Method) == http.MethodHead, clientClose: r.Close,
	}
	fw := &l.fw
	*fw = forwarding{peer: c.remote, priorFor: fw.priorFor[:0], priorProto: fw.priorProto[:0]}
	if len(l.proxy.limits.TrustedProxies) > 0 && l.proxy.limits.trusts(c.remote) {
		fw.limits = &l.proxy.limits
	}
	req, idempotent := appendBackendHead(x.req, c.in, r, fw, false)
	x.idempotent = idempotent
	req = append(req, "\r\n"...)
	body := int(max(0, r.ContentLength))
	req = append(req, c.in[r.HeadLen:r.HeadLen+body]...)
	x.req = req
	l.consume(c, r.HeadLen+body)
	c.x = x
	c.waitingHead, c.waitingBody, c.bodySeen = false, false, 0
	c.deadline = time.Time{}
	l.sendRequest(c)
}

// sendRequest sends the request in flight to the next task: on a pooled
// connection, or a new one.
func (l *loop) sendRequest(c *loopConn) {
	x := c.x
	for {
		e := x.u.pick(x.tried[:x.ntried])
		if e == nil {
			x.u.refresh()
			l.fail(c, errNoBackend)
			return
		}
		b := l.pooled(e)
		reused := b != nil
		if b == nil {
			var err error
			if b, err = l.dial(e); err != nil {
				e.markDown()
				x.u.refresh()
				x.tried[x.ntried] = e
				x.ntried++
				if x.ntried >= maxAttempts {
					l.fail(c, err)
					return
				}
				continue
			}
		}
		b.reused, b.served, x.backend = reused, x, b
		if b.connecting {
			l.setDeadline(b, x.route.Timeouts.connect())
			return
		}
		l.connected(b)
		return
	}
}

// connected writes the request on b, now connected.
func (l *loop) connected(b *loopConn) {
	x := b.served
	l.setDeadline(b, x.route.Timeouts.responseHeader())
	l.send(b, x.req)
}

// backendFailed ends b after err and decides what becomes of its request:
// another try (a connection that could not be made, a pooled one the
// backend had closed, or an idempotent request that got no answer), a
// 502 or 504, or — when the response had begun — the end of the client's
// connection, which is all that tells the client it was cut short.
func (l *loop) backendFailed(b *loopConn, err error) {
	x := b.served
	l.closeBackend(b)
	if x == nil {
		return
	}
	b.served, x.backend = nil, nil
	c := x.client
	if x.gotBytes {
		if x.sentHead {
			l.closeClient(c)
		} else {
			l.fail(c, err)
		}
		return
	}
	f := failure{err: err, dialFailed: isDialError(err), stale: b.reused && x.retries < maxStaleRetries, idempotent: x.idempotent}
	if f.dialFailed {
		b.ep.markDown()
		x.u.refresh()
	}
	switch f.next() {
	case retryFresh:
		x.retries++
		l.sendRequest(c)
		return
	case retryOther:
		x.tried[x.ntried] = b.ep
		if x.ntried++; x.ntried < maxAttempts {
			l.sendRequest(c)
			return
		}
	}
	l.fail(c, err)
}

// fail answers the request in flight with a 502 or 504.
func (l *loop) fail(c *loopConn, err error) {
	x := c.x
	rep := failureReply(err)
	l.srv.log.Warn("proxy request failed", "host", x.host, "path", string(x.target), "status", rep.status, "err", err)
	l.observe(x, rep.status)
	l.scratch = rep.appendTo(l.scratch[:0], x.clientClose)
	l.send(c, l.scratch)
	if c.closed {
		// The client is gone (closeClient ended the exchange).
		return
	}
	l.finish(c, nil)
}

// refuse answers c's request with status and closes the connection,
// lingering: what the client sends meanwhile is read and dropped, so that
// closing does not reset the connection before it read the answer.
func (l *loop) refuse(c *loopConn, status int) {
	l.scratch = refusalReply(status).appendTo(l.scratch[:0], true)
	c.waitingHead, c.waitingBody, c.bodySeen = false, false, 0
	c.closeWhenFlushed, c.lingerWhenFlushed = true, true
	l.send(c, l.scratch)
	if !c.closed && len(c.out) == 0 {
		l.endClient(c)
	}
}

// endClient ends a client's connection once its last answer is written:
// at once, or after lingering (refuse).
func (l *loop) endClient(c *loopConn) {
	if !c.lingerWhenFlushed {
		l.closeClient(c)
		return
	}
	c.lingerWhenFlushed, c.lingering = false, true
	c.in = l.release(c.in)
	unix.Shutdown(c.fd, unix.SHUT_WR)
	l.setDeadline(c, lingerTimeout)
	l.drainLingering(c)
}

// drainLingering reads and drops what a lingering client sends, and
// closes the connection at its end.
func (l *loop) drainLingering(c *loopConn) {
	var buf [4 << 10]byte
	for {
		n, err := rawRead(c.fd, buf[:])
		switch {
		case n > 0, err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			c.readable = false
			return
		}
		// The end of the stream, or an error: the client is done.
		l.closeClient(c)
		return
	}
}

func (l *loop) observe(x *exchange, status int) {
	if l.proxy.metrics != nil {
		x.route.stats.Observe(status, l.now.Sub(x.start))
	}
}

// backendReadable passes what the backend sent on to the client, until
// the socket is drained, the response ends, or the client has enough
// waiting (then the client's next flush resumes it).
func (l *loop) backendReadable(b *loopConn) {
	x := b.served
	if x == nil {
		// Pooled: the backend closed it (or broke the protocol).
		l.closeBackend(b)
		return
	}
	c := x.client
	for b.served == x && !b.closed {
		if len(c.out) >= maxClientPending {
			return
		}
		l.fill(b, loopBufferSize)
		if len(b.in) > 0 {
			x.gotBytes = true
			l.relay(c, b)
			if b.served != x || b.closed {
				return
			}
		}
		if b.eof {
			l.backendEnded(b)
			return
		}
		if !b.readable {
			return
		}
	}
}

// backendEnded handles the end of b's stream: the end of a response
// delimited by it, or a failure.
func (l *loop) backendEnded(b *loopConn) {
	x := b.served
	if x.sentHead && x.framing == bodyUntilClose {
		l.finish(x.client, b)
		return
	}
	l.backendFailed(b, io.ErrUnexpectedEOF)
}

// relay moves the response bytes in b.in to the client: the head,
// rewritten, then the body as far as it belongs to this response.
func (l *loop) relay(c *loopConn, b *loopConn) {
	x := b.served
	for len(b.in) > 0 {
		if !x.sentHead {
			r := &l.resp
			switch err := h1.ParseResponse(b.in, maxHeaderBytes, r); {
			case err == h1.ErrIncomplete:
				return
			case err != nil:
				l.backendFailed(b, err)
				return
			}
			if r.Status < 200 {
				if r.Status == http.StatusSwitchingProtocols {
					// Nobody asked for an upgrade.
					l.backendFailed(b, errUnaskedUpgrade)
					return
				}
				// An interim response (103 Early Hints) passes as it is.
				l.send(c, b.in[:r.HeadLen])
				if c.closed {
					// A failed write closed b too, and released b.in.
					return
				}
				l.consume(b, r.HeadLen)
				continue
			}
			out := l.responseHead(x, r, b.in)
			l.consume(b, r.HeadLen)
			x.sentHead = true
			b.deadline = time.Time{}
			l.observe(x, r.Status)
			n, done, err := x.bodyPart(b.in)
			if err != nil {
				l.send(c, out)
				l.closeClient(c)
				return
			}
			out = append(out, b.in[:n]...)
			l.scratch = out
			l.consume(b, n)
			l.send(c, out)
			if c.closed {
				return
			}
			if done {
				l.finish(c, b)
				return
			}
			continue
		}
		n, done, err := x.bodyPart(b.in)
		if err != nil {
			l.closeClient(c)
			return
		}
		l.send(c, b.in[:n])
		if c.closed {
			// A failed write closed b too, and released b.in.
			return
		}
		l.consume(b, n)
		if done {
			l.finish(c, b)
			return
		}
	}
}

// responseHead returns the response head for the client, in l.scratch,
// and sets x's body framing.
func (l *loop) responseHead(x *exchange, r *h1.Response, raw []byte) []byte {
	x.backendClose = r.Close
	out, f := appendResponseHead(l.scratch[:0], r, raw, x.head, x.clientClose)
	x.responseFraming = f
	return out
}

// finish ends the exchange: b (nil after a failure) goes back to the pool
// if it can serve another request, and the client's next request starts
// once the response is written.
func (l *loop) finish(c *loopConn, b *loopConn) {
	x := c.x
	if b != nil {
		b.served, x.backend = nil, nil
		// A connection with bytes left over either way (an answer sent
		// before the whole request was taken) is not reused.
		if x.backendClose || x.framing == bodyUntilClose || len(b.in) > 0 || len(b.out) > 0 || b.eof {
			l.closeBackend(b)
		} else {
			l.pool(b)
		}
	}
	c.x = nil
	if cap(x.req) > loopBufferSize {
		x.req = nil
	}
	if c.closed {
		return
	}
	if x.clientClose || x.framing == bodyUntilClose || l.srv.stopping.Load() {
		c.closeWhenFlushed = true
	}
	if len(c.out) > 0 {
		return // flush goes on
	}
	if c.closeWhenFlushed {
		l.endClient(c)
		return
	}
	l.nextRequest(c)
}
