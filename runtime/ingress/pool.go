package ingress

import (
	"bufio"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// endpoint is one task address of an upstream and its one pool of idle
// connections. The pool has a part per event loop (loopConns, used only by
// that loop's thread, in loop.go) and a part for net/http's goroutines
// (idle); both keep at most maxIdlePerEndpoint connections for at most
// backendIdleTimeout, and close drains both.
type endpoint struct {
	addr      string
	addrPort  netip.AddrPort // addr, for the event loops' dials
	downUntil atomic.Int64   // unix nanoseconds
	// closed: the task left the backend set, or the upstream stopped;
	// no connection to it is pooled from then on.
	closed atomic.Bool
	idle   connPool
	// up is the upstream e belongs to.
	up *upstream
}

func newEndpoint(u *upstream, addr string) *endpoint {
	e := &endpoint{addr: addr, up: u}
	e.addrPort, _ = netip.ParseAddrPort(addr)
	return e
}

// close drops every idle connection to e, and every one that becomes idle
// later: the goroutines' at once, the event loops' at their next wake-up,
// which close asks for.
func (e *endpoint) close() {
	e.closed.Store(true)
	e.idle.closeAll()
	if n := e.up.onEndpointClosed; n != nil {
		n()
	}
}

func (e *endpoint) markDown() {
	e.downUntil.Store(time.Now().Add(markDownFor).UnixNano())
}

// backendConn is one keep-alive connection to a task, used by net/http's
// goroutines (transport.go).
type backendConn struct {
	conn      net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
}

// backendBufferSize is the size of a backend connection's read and write
// buffers.
const backendBufferSize = 16 << 10

func newBackendConn(c net.Conn) *backendConn {
	return &backendConn{conn: c, br: bufio.NewReaderSize(c, backendBufferSize), bw: bufio.NewWriterSize(c, backendBufferSize)}
}

// connPool is the goroutines' part of a task's pool: idle connections,
// most recently used on top.
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
	if time.Since(bc.idleSince) > backendIdleTimeout {
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

// closeAll closes the idle connections and refuses new ones.
func (p *connPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, bc := range p.idle {
		bc.conn.Close()
	}
	p.idle = nil
}

// expire closes the connections idle for longer than backendIdleTimeout
// (the upstream's resolver calls it, so a quiet task does not keep them).
func (p *connPool) expire(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	keep := p.idle[:0]
	for _, bc := range p.idle {
		if now.Sub(bc.idleSince) > backendIdleTimeout {
			bc.conn.Close()
			continue
		}
		keep = append(keep, bc)
	}
	clear(p.idle[len(keep):])
	p.idle = keep
}
