package ingress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/slipwayhq/slipway/runtime/ingress/internal/h1"
)

// The goroutine HTTP/1 server: one goroutine per connection serves
// HTTP/1.x over TLS, and every plain-HTTP connection an event loop hands
// over (HTTP/1.0, long or chunked bodies, Expect, upgrades, absolute-form
// targets, ACME challenges), as the event loops serve theirs: each head is
// read by the strict parser (a refused one is answered and the connection
// closed), rewritten by the same rules (relay.go, forward.go), and the
// response head and body pass through as bytes, followed to their end.
// It skips what net/http's server costs per request (a Request and its
// header maps, a context, a goroutine watching the connection) and never
// reads a head net/http would read differently. HTTP/2 is internal/h2's.

// h1conn is one HTTP/1 client connection.
type h1conn struct {
	p    *Proxy
	srv  *server
	conn net.Conn
	kind Listener
	peer netip.Addr

	// buf holds what was read from conn and not used yet; mem is the
	// array it is read into.
	buf []byte
	mem []byte
	bw  *bufio.Writer

	// req is the request being served, aliasing buf, which reading its
	// body may move: what is needed of it after that is taken first
	// (target, minor, and forward's own).
	req     h1.Request
	target  []byte
	minor   int
	resp    h1.Response
	fw      forwarding
	scratch []byte // the backend's request head
	out     []byte // a response head for the client

	// idle: the connection waits for a request (shutdown ends it).
	idle atomic.Bool
}

// h1BufferSize is the size of a connection's read and write buffers.
const h1BufferSize = 16 << 10

// serveHTTP1 serves c, a connection of a kind of listener, until it ends;
// read holds what was already read from it (an event loop's bytes).
func (s *server) serveHTTP1(c net.Conn, kind Listener, read []byte) {
	hc := &h1conn{p: s.proxy, srv: s, conn: c, kind: kind, bw: bufio.NewWriterSize(c, h1BufferSize)}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		hc.peer = ap.Addr().Unmap()
	}
	if len(read) > 0 {
		hc.mem = make([]byte, max(h1BufferSize, len(read)))
		hc.buf = hc.mem[:copy(hc.mem, read)]
	}
	if !s.track(hc) {
		c.Close()
		return
	}
	defer s.untrack(hc)
	defer c.Close()
	for hc.readHead() {
		if !hc.serveRequest() || s.stopping.Load() {
			return
		}
	}
}

// readHead waits for the next request head and reports whether c.req
// holds it; false means the connection is over (it closed, timed out, or
// sent a head the parser refused, which was answered).
func (c *h1conn) readHead() bool {
	c.idle.Store(true)
	defer c.idle.Store(false)
	waiting := false
	for {
		if len(c.buf) > 0 {
			err := h1.ParseRequest(c.buf, maxHeaderBytes, &c.req)
			switch {
			case err == nil:
				return true
			case err != h1.ErrIncomplete:
				// Never read by a more lenient parser.
				c.refuse(h1.Status(err))
				return false
			case !waiting:
				// A head has begun: it has the head timeout to arrive.
				waiting = true
				c.conn.SetReadDeadline(time.Now().Add(clientHeadTimeout))
			}
		} else {
			if c.srv.stopping.Load() {
				return false
			}
			c.conn.SetReadDeadline(time.Now().Add(clientIdleTimeout))
		}
		if err := c.fill(); err != nil {
			return false
		}
	}
}

// fill reads more into buf.
func (c *h1conn) fill() error {
	if len(c.buf) == cap(c.buf) {
		// Move what waits to the front of mem (a larger one when it is
		// half full: a head may take up to maxHeaderBytes).
		size := max(len(c.mem), h1BufferSize)
		if len(c.buf) >= size/2 {
			size = 2 * size
		}
		if size > len(c.mem) {
			c.mem = make([]byte, size)
		}
		c.buf = c.mem[:copy(c.mem, c.buf)]
	}
	n, err := c.conn.Read(c.buf[len(c.buf):cap(c.buf)])
	c.buf = c.buf[:len(c.buf)+n]
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// consume drops the first n bytes of buf.
func (c *h1conn) consume(n int) {
	c.buf = c.buf[n:]
	if len(c.buf) == 0 {
		c.buf = c.mem[:0]
	}
}

// refuse answers the request with status and ends the connection.
func (c *h1conn) refuse(status int) {
	c.bw.Write(refusalReply(status).appendTo(c.out[:0], true))
	c.linger()
}

// linger ends a connection whose client may still be sending (a refused
// or unread request): the answer is flushed, the write side shut, and
// what the client sends is read and dropped until it closes or
// lingerTimeout passes, so that it reads the answer rather than a reset.
func (c *h1conn) linger() {
	if c.bw.Flush() != nil {
		return
	}
	if cw, ok := c.conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.conn.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.Copy(io.Discard, c.conn)
}

// serveRequest serves the request in c.req and reports whether the
// connection goes on.
func (c *h1conn) serveRequest() bool {
	r := &c.req
	start := time.Now()
	host := string(r.RoutingHost())
	c.target, c.minor = append(c.target[:0], r.Path...), r.Minor
	route := c.p.Lookup(c.kind, host)
	status := statusClientGone
	if stats := c.p.stats(route); stats != nil {
		defer func() { stats.Observe(status, time.Since(start)) }()
	}
	if c.p.limits.bodyTooLarge(r.ContentLength) {
		status = http.StatusRequestEntityTooLarge
		c.refuse(status)
		return false
	}
	if c.kind == ListenerHTTP && c.p.acme != nil && bytes.HasPrefix(r.Path, []byte(acmeChallengePrefix)) {
		if handled, keep := c.acmeChallenge(host); handled {
			status = http.StatusOK
			return keep
		}
	}
	rep, proxy := decide(c.p, c.kind, route, host, r.Path)
	if !proxy {
		status = rep.status
		return c.answer(rep)
	}
	var keep bool
	status, keep = c.forward(route, host)
	return keep
}

// closing says whether the connection ends after the request in c.req:
// the client asked (or spoke HTTP/1.0 without asking for keep-alive).
func (c *h1conn) closing() bool { return c.req.Close }

// answer gives the gateway's own answer: a small body is read and dropped
// first, and any other ends the connection after the answer, never left
// to be read as the next request.
func (c *h1conn) answer(rep reply) bool {
	n, err := c.readSmallBody()
	if err == nil {
		c.consume(n)
	}
	closing := err != nil || c.closing()
	c.bw.Write(rep.appendTo(c.out[:0], closing))
	if err != nil {
		c.linger()
		return false
	}
	return c.bw.Flush() == nil && !closing
}

// errLongBody is readSmallBody's answer for a body it does not read.
var errLongBody = errors.New("request body longer than the gateway reads whole")

// readSmallBody reads the whole request (a body of at most
// maxBufferedRequestBody bytes) into buf and returns its length; an error
// for a longer or chunked body (errLongBody), or one that did not arrive
// (in time).
func (c *h1conn) readSmallBody() (int, error) {
	r := &c.req
	if r.TransferEncoding || r.ContentLength > maxBufferedRequestBody {
		return 0, errLongBody
	}
	end := r.HeadLen + int(max(0, r.ContentLength))
	if err := c.readUntil(end); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	return end, nil
}

// readUntil reads until buf holds n bytes, with the body idle timeout
// from each arrival.
func (c *h1conn) readUntil(n int) error {
	for len(c.buf) < n {
		c.conn.SetReadDeadline(time.Now().Add(c.p.limits.bodyIdle()))
		if err := c.fill(); err != nil {
			return err
		}
	}
	return nil
}

// forward sends the request in c.req to route's backend and passes the
// answer on; it returns the status and whether the connection goes on.
func (c *h1conn) forward(route *Route, host string) (int, bool) {
	r := &c.req
	closing, isHEAD := c.closing(), isHead(r.Method)
	fw := &c.fw
	*fw = forwarding{peer: c.peer, https: c.kind == ListenerHTTPS, priorFor: fw.priorFor[:0], priorProto: fw.priorProto[:0]}
	if len(c.p.limits.TrustedProxies) > 0 && c.p.limits.trusts(c.peer) {
		fw.limits = &c.p.limits
	}
	upgrade := r.Upgrade && r.Minor == 1 && namedByConnection(r.Fields, []byte("upgrade"))
	head, idempotent := appendBackendHead(c.scratch[:0], c.buf, r, fw, upgrade)
	c.scratch = append(head, "\r\n"...)
	o := &outgoing{ctx: context.Background(), head: c.scratch, idempotent: idempotent, timeouts: route.Timeouts}
	hasBody := r.TransferEncoding || r.ContentLength > 0
	if hasBody && r.Expect && r.Minor == 1 {
		// The client waits for a go-ahead before it sends the body.
		c.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		if c.bw.Flush() != nil {
			return statusClientGone, false
		}
	}
	used := r.HeadLen
	switch {
	case !hasBody:
	case r.TransferEncoding || r.ContentLength > maxBufferedRequestBody:
		// Streamed as it comes: the chunked body as it was sent (the
		// strict parser and h1.Chunked check it on the way).
		c.consume(r.HeadLen)
		used = 0
		b := &h1Body{c: c, remaining: r.ContentLength, chunked: r.TransferEncoding, limit: c.p.limits.maxBody()}
		o.stream = &clientBody{r: b, rc: c.conn, idle: c.p.limits.bodyIdle()}
	default:
		n, err := c.readSmallBody()
		if err != nil {
			return c.bodyFailed(err)
		}
		// Held in memory, the request can go to another task when the
		// first fails.
		o.body, used = c.buf[r.HeadLen:n], n
	}
	fl, err := c.p.upstream(route).roundTrip(o)
	// The request's bytes in buf (head and a small body) were sent.
	c.consume(used)
	if err != nil {
		return c.failed(host, err, o.stream)
	}
	return c.relay(fl, o.stream, host, isHEAD, closing, upgrade)
}

func isHead(method []byte) bool { return string(method) == http.MethodHead }

// failed answers a request no backend answered (502, 504), or whose body
// failed.
func (c *h1conn) failed(host string, err error, stream *clientBody) (int, bool) {
	var body *clientBodyError
	if errors.As(err, &body) {
		return c.bodyFailed(body.err)
	}
	rep := failureReply(err)
	c.p.log.Warn("proxy request failed", "host", host, "path", string(c.target), "status", rep.status, "err", err)
	if stream != nil && !stream.eof {
		// The rest of the body is not read as a request.
		c.bw.Write(rep.appendTo(c.out[:0], true))
		c.linger()
		return rep.status, false
	}
	closing := c.closing()
	c.bw.Write(rep.appendTo(c.out[:0], closing))
	return rep.status, c.bw.Flush() == nil && !closing
}

// bodyFailed answers a request whose body could not be read
// (bodyFailureStatus); the connection ends.
func (c *h1conn) bodyFailed(err error) (int, bool) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		// The client went away.
		return statusClientGone, false
	}
	status := bodyFailureStatus(err)
	c.refuse(status)
	return status, false
}

// relay passes the backend's answer on: informational answers, the head
// rewritten, then the body as it comes, flushed whenever the backend has
// nothing more for now. It returns the status and whether the
// connection goes on.
func (c *h1conn) relay(fl *inFlight, stream *clientBody, host string, head, closing, upgrade bool) (int, bool) {
	br := fl.bc.br
	rs := &c.resp
	var raw []byte
	for {
		var err error
		if raw, err = readResponseHead(br, rs); err != nil {
			fl.bc.conn.Close()
			return c.failed(host, fl.fail(err), stream)
		}
		if rs.Status >= 200 {
			break
		}
		if rs.Status == http.StatusSwitchingProtocols {
			if !upgrade {
				fl.bc.conn.Close()
				return c.failed(host, fl.fail(errUnaskedUpgrade), stream)
			}
			c.switchProtocols(fl)
			return http.StatusSwitchingProtocols, false
		}
		if rs.Status != http.StatusContinue {
			// 103 Early Hints pass as they are.
			c.bw.Write(raw[:rs.HeadLen])
			c.bw.Flush()
		}
		br.Discard(rs.HeadLen)
	}
	fl.gotHead()
	status, backendClose := rs.Status, rs.Close
	var f responseFraming
	c.out, f = appendResponseHead(c.out[:0], rs, raw, head, closing)
	if c.minor == 0 && !closing && f.framing != bodyUntilClose {
		// An HTTP/1.0 client keeps its connection only when told.
		c.out = append(c.out[:len(c.out)-2], "Connection: keep-alive\r\n\r\n"...)
	}
	br.Discard(rs.HeadLen)
	c.bw.Write(c.out)
	buf := getBuffer()
	defer putBuffer(buf)
	for f.framing != bodyNone {
		if br.Buffered() == 0 && c.bw.Flush() != nil {
			// The client went away (or took nothing for the send
			// timeout): the backend's connection closes with the rest
			// of the response in it.
			fl.release(false)
			return status, false
		}
		n, err := br.Read(*buf)
		k, done, ferr := f.bodyPart((*buf)[:n])
		if ferr != nil {
			// The backend broke its own framing: the client's
			// connection ends, the response incomplete.
			c.bw.Flush()
			fl.release(false)
			return status, false
		}
		if _, err := c.bw.Write((*buf)[:k]); err != nil {
			// The client went away, or took nothing for the send
			// timeout: the backend's connection closes with the rest.
			fl.release(false)
			return status, false
		}
		if done {
			backendClose = backendClose || k < n
			break
		}
		if err != nil {
			// The end of a response delimited by the connection's end,
			// or a backend that died mid-response: either way the
			// client's connection ends here, with no last chunk made up.
			c.bw.Flush()
			fl.release(false)
			return status, false
		}
	}
	flushed := c.bw.Flush() == nil
	fl.release(!backendClose && f.framing != bodyUntilClose)
	if stream != nil && !stream.eof {
		// The backend answered before the body was read whole: the
		// connection ends, its rest never read as a request.
		c.linger()
		return status, false
	}
	return status, flushed && !closing && f.framing != bodyUntilClose
}

// switchProtocols completes an upgrade the backend agreed to (a
// websocket): the client gets the 101, and from then on bytes pass both
// ways until either side ends.
func (c *h1conn) switchProtocols(fl *inFlight) {
	rs := &c.resp
	backend := fl.bc
	defer backend.conn.Close()
	fl.gotHead()
	fl.stop()
	out := append(c.out[:0], "HTTP/1.1 101 Switching Protocols\r\n"...)
	var upgradeTo []byte
	for _, f := range rs.Fields {
		if h1.EqualFold(f.Name, "upgrade") {
			upgradeTo = f.Value
		}
		if isHopField(f.Name) || rs.Options && namedByConnection(rs.Fields, f.Name) {
			continue
		}
		out = appendField(out, f.Name, f.Value)
	}
	out = append(out, "Connection: Upgrade\r\nUpgrade: "...)
	out = append(out, upgradeTo...)
	out = append(out, "\r\n\r\n"...)
	backend.br.Discard(rs.HeadLen)
	c.bw.Write(out)
	if c.bw.Flush() != nil {
		return
	}
	c.conn.SetReadDeadline(time.Time{})
	done := make(chan struct{}, 2)
	pass := func(dst io.Writer, src io.Reader) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	// What the client sent past the head goes first.
	go pass(backend.conn, io.MultiReader(bytesReader(c.buf), c.conn))
	go pass(c.conn, backend.br)
	// Either side ending ends both: the other copy returns once the
	// connections close.
	<-done
	c.conn.Close()
	backend.conn.Close()
	<-done
	c.buf = nil
}

// bytesReader reads b (a copy, as the connection's buffer is reused).
func bytesReader(b []byte) io.Reader { return strings.NewReader(string(b)) }

// h1Body is a request body as the client sends it: buf first, then the
// connection, up to its length or the end of its chunks (passed on
// chunked, as sent).
type h1Body struct {
	c         *h1conn
	remaining int64 // of a body with a length
	chunked   bool
	sc        h1.Chunked
	// limit bounds a chunked body (-1: none); n counts its bytes.
	limit, n int64
	done     bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	c := b.c
	if !b.chunked {
		p = p[:min(int64(len(p)), b.remaining)]
	}
	var n int
	if len(c.buf) > 0 {
		n = copy(p, c.buf)
	} else {
		var err error
		if n, err = c.conn.Read(p); n == 0 {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
	fromBuf := len(c.buf) > 0
	if !b.chunked {
		if fromBuf {
			c.consume(n)
		}
		if b.remaining -= int64(n); b.remaining == 0 {
			b.done = true
			return n, io.EOF
		}
		return n, nil
	}
	k, done, err := b.sc.Scan(p[:n])
	if fromBuf {
		c.consume(k)
	} else if k < n {
		// The next request came with the body's end.
		c.buf = append(c.mem[:0], p[k:n]...)
	}
	if err != nil {
		return k, errBrokenChunk
	}
	if b.n += int64(k); b.limit >= 0 && b.n > b.limit {
		// Not a byte past the limit goes on.
		return k - int(b.n-b.limit), &http.MaxBytesError{Limit: b.limit}
	}
	if done {
		b.done = true
		return k, io.EOF
	}
	return k, nil
}

var errBrokenChunk = errors.New("malformed chunked request body")

// acmeChallenge answers an ACME HTTP-01 challenge through certmagic's
// handler; handled is false when it is none of certmagic's.
func (c *h1conn) acmeChallenge(host string) (handled, keep bool) {
	r := &c.req
	path, query, _ := strings.Cut(string(r.Path), "?")
	req := &http.Request{Method: string(r.Method), URL: &url.URL{Path: path, RawQuery: query}, Host: host,
		Header: http.Header{}, RequestURI: string(r.Target), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: r.Minor,
		RemoteAddr: c.conn.RemoteAddr().String(), Body: http.NoBody}
	rec := &recordedResponse{header: http.Header{}}
	if !c.p.acme.HandleHTTPChallenge(rec, req) {
		return false, false
	}
	rep := reply{status: rec.status, text: string(rec.body)}
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	return true, c.answer(rep)
}

// recordedResponse is an http.ResponseWriter that keeps a small answer.
type recordedResponse struct {
	header http.Header
	status int
	body   []byte
}

func (w *recordedResponse) Header() http.Header { return w.header }
func (w *recordedResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *recordedResponse) Write(p []byte) (int, error) {
	w.body = append(w.body, p...)
	return len(p), nil
}
