package ingress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// The direct path proxies the common request — idempotent, no body, no
// protocol upgrade, no Expect — on a pooled backend connection from the handler's
// own goroutine: it writes the request and reads the response head itself,
// where http.Transport hands every request to a writer goroutine and every
// response back from a reader goroutine. On a busy gateway those handoffs
// and the scheduler work behind them cost more CPU than the proxying. The
// request and response are still written and parsed by net/http
// (Request.Write, ReadResponse); everything else (bodies, websockets,
// 100-continue) goes through the upstream's http.Transport.

const (
	// maxIdlePerEndpoint bounds the idle connections kept per task.
	maxIdlePerEndpoint = 512
	// idleConnTimeout closes connections unused this long (backends
	// commonly drop idle ones after 60-120 s).
	idleConnTimeout = 50 * time.Second
	connBufferSize  = 16 << 10
)

// canGoDirect says whether req can take the direct path: bodiless,
// idempotent (a pooled connection the backend closed meanwhile is only
// noticed when the request fails on it, and only an idempotent request
// may then be sent again), and not asking for an upgrade or 100-continue.
func canGoDirect(req *http.Request, idempotent bool) bool {
	return idempotent && (req.Body == nil || req.Body == http.NoBody) &&
		req.Header.Get("Upgrade") == "" && req.Header.Get("Expect") == ""
}

// backendConn is one keep-alive connection to a task.
type backendConn struct {
	conn      net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
}

// connPool holds a task's idle connections, most recently used on top.
type connPool struct {
	mu     sync.Mutex
	idle   []*backendConn
	closed bool
}

func (p *connPool) get() *backendConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	bc := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	if time.Since(bc.idleSince) > idleConnTimeout {
		// The top is the newest: every other one is older still.
		for _, old := range p.idle {
			old.conn.Close()
		}
		clear(p.idle)
		p.idle = p.idle[:0]
		bc.conn.Close()
		return nil
	}
	return bc
}

func (p *connPool) put(bc *backendConn) {
	bc.idleSince = time.Now()
	p.mu.Lock()
	if p.closed || len(p.idle) >= maxIdlePerEndpoint {
		p.mu.Unlock()
		bc.conn.Close()
		return
	}
	p.idle = append(p.idle, bc)
	p.mu.Unlock()
}

// closeAll closes the idle connections and refuses new ones (the task is
// gone or the upstream stopped).
func (p *connPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, bc := range p.idle {
		bc.conn.Close()
	}
	p.idle = nil
}

// roundTripDirect sends req to e on a pooled connection (or a new one). A
// pooled connection the backend closed while idle fails before any answer
// arrived; the request then goes again on a fresh one, as http.Transport
// does.
func (u *upstream) roundTripDirect(req *http.Request, e *endpoint) (*http.Response, error) {
	for {
		bc, reused := e.pool.get(), true
		if bc == nil {
			conn, err := u.dialer.DialContext(req.Context(), "tcp", e.addr)
			if err != nil {
				return nil, err
			}
			bc, reused = &backendConn{conn: conn, br: bufio.NewReaderSize(conn, connBufferSize), bw: bufio.NewWriterSize(conn, connBufferSize)}, false
		}
		resp, err := u.exchange(req, bc, e)
		if err == nil {
			return resp, nil
		}
		bc.conn.Close()
		if !reused || req.Context().Err() != nil || !closedWhileIdle(err) {
			return nil, err
		}
	}
}

// closedWhileIdle says whether err is what a connection the backend had
// closed looks like before any byte of an answer.
func closedWhileIdle(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// aLongTimeAgo is a deadline that makes blocked reads and writes return.
var aLongTimeAgo = time.Unix(1, 0)

// exchange writes req and reads the response head on bc, within the
// route's response header timeout; the body is read by the caller through
// directBody, which gives bc back to the pool at its end.
func (u *upstream) exchange(req *http.Request, bc *backendConn, e *endpoint) (*http.Response, error) {
	// A client that goes away unblocks whatever bc is waiting for.
	stop := context.AfterFunc(req.Context(), func() { bc.conn.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		return nil, err
	}
	bc.conn.SetDeadline(time.Now().Add(u.key.timeouts.responseHeader()))
	if err := req.Write(bc.bw); err != nil {
		return fail(err)
	}
	if err := bc.bw.Flush(); err != nil {
		return fail(err)
	}
	// The first byte tells a connection the backend had closed (nothing
	// comes back at all) from a broken answer.
	if _, err := bc.br.Peek(1); err != nil {
		return fail(err)
	}
	var resp *http.Response
	for {
		var err error
		if resp, err = http.ReadResponse(bc.br, req); err != nil {
			return fail(err)
		}
		// Informational answers (103 Early Hints) are not passed on here.
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// Only an upgrade request may switch protocols.
		return fail(errors.New("backend switched protocols without an upgrade request"))
	}
	bc.conn.SetDeadline(time.Time{})
	b := &directBody{rc: resp.Body, ctx: req.Context(), bc: bc, pool: &e.pool, stop: stop, reusable: !resp.Close && !req.Close}
	if resp.Body == http.NoBody {
		b.release(true)
		return resp, nil
	}
	resp.Body = b
	return resp, nil
}

// directBody is a response body on a pooled connection: read to its end,
// the connection goes back to the pool; closed before, it is closed.
type directBody struct {
	rc       io.ReadCloser
	ctx      context.Context // the request's
	bc       *backendConn
	pool     *connPool
	stop     func() bool
	reusable bool
	done     bool
}

func (b *directBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.release(true)
	} else if err != nil {
		b.release(false)
		if b.ctx.Err() != nil {
			// The client went away (which set the deadline): say so, as
			// http.Transport does, rather than "i/o timeout".
			err = b.ctx.Err()
		}
	}
	return n, err
}

// Close never drains the body (net/http's would, and a stream has no end).
func (b *directBody) Close() error {
	if !b.done {
		b.release(false)
	}
	return nil
}

func (b *directBody) release(atEOF bool) {
	b.done = true
	// stop reports false when the client already went away and the
	// deadline was (or is being) set: the connection is no use then.
	if b.stop() && atEOF && b.reusable && b.bc.br.Buffered() == 0 {
		b.pool.put(b.bc)
		return
	}
	b.bc.conn.Close()
}
