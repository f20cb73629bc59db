//go:build linux

package ingress

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/slipwayhq/slipway/runtime/ingress/internal/h1"
)

// The plain-HTTP listeners are served first by event loops: one OS thread
// per CPU, each waiting in epoll on the listeners and on its own client
// and backend connections, as nginx's workers do. A goroutine per
// connection costs a park and a wake-up for every read that would block,
// twice per proxied request; under load that scheduling took as much CPU
// as the proxying itself (bench/gateway).
//
// Every request head is read by the strict parser (internal/h1); a head it
// refuses is answered 400 (431, 501, 505) and the connection closed. A
// loop serves the common request itself: HTTP/1.1 with a body of at most
// maxBufferedRequestBody bytes (read whole before anything is answered),
// proxied to a backend route, or answered by the gateway (a 404, a
// redirect). Every other request — HTTP/1.0, a chunked or larger body,
// Expect, an upgrade, the absolute form, an ACME challenge — hands its
// connection over to the goroutine HTTP/1 server (conn.go), which goes on
// reading it as strictly. Responses of any size and framing stream
// through a loop with backpressure. The rules of what passes are the
// forwarding core's (forward.go, relay.go), shared with the other servers.

// loopServer runs the event loops of the plain-HTTP listeners.
type loopServer struct {
	proxy *Proxy
	log   *slog.Logger
	// handOff serves a connection handed over, with what was read of it:
	// the server's HTTP/1 server (tests replace it).
	handOff   func(c net.Conn, kind Listener, read []byte)
	loops     []*loop
	listeners []*loopListener
	stopping  atomic.Bool
	done      sync.WaitGroup
	// endpointsClosed counts endpoint.close calls: a loop that sees it
	// move drops its idle connections to closed endpoints. running is
	// the loops once started, for others to poke.
	endpointsClosed atomic.Uint64
	running         atomic.Pointer[[]*loop]

	// beforeBegin, set by tests only, runs before a request is sent.
	beforeBegin atomic.Pointer[func(host string)]
}

// loopListener is one plain-HTTP listener a loop accepts on.
type loopListener struct {
	fd   int
	file *os.File // owns fd, a duplicate of the listener's
	kind Listener
	// acme: ACME HTTP-01 challenges are answered here (by net/http).
	acme bool
}

func newLoopServer(p *Proxy, log *slog.Logger, srv *server) *loopServer {
	s := &loopServer{proxy: p, log: log, handOff: srv.serveHTTP1}
	p.ups.onEndpointClosed = s.endpointClosed
	return s
}

// endpointClosed has every loop drop its idle connections to endpoints
// that closed.
func (s *loopServer) endpointClosed() {
	s.endpointsClosed.Add(1)
	if loops := s.running.Load(); loops != nil {
		for _, l := range *loops {
			// A loop that stopped ignores it.
			l.poke()
		}
	}
}

// add serves ln on the loops.
func (s *loopServer) add(ln net.Listener, kind Listener, acme bool) error {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return fmt.Errorf("event loop: %T is no TCP listener", ln)
	}
	f, err := tl.File()
	if err != nil {
		return err
	}
	fd := int(f.Fd())
	if err := unix.SetNonblock(fd, true); err != nil {
		f.Close()
		return err
	}
	s.listeners = append(s.listeners, &loopListener{fd: fd, file: f, kind: kind, acme: acme})
	return nil
}

// start runs one loop per CPU Go may use.
func (s *loopServer) start() error {
	for range runtime.GOMAXPROCS(0) {
		l, err := newLoop(s)
		if err != nil {
			s.closeLoops()
			return err
		}
		s.loops = append(s.loops, l)
	}
	loops := slices.Clone(s.loops)
	s.running.Store(&loops)
	for _, l := range s.loops {
		s.done.Add(1)
		go l.run()
	}
	return nil
}

func (s *loopServer) closeLoops() {
	for _, l := range s.loops {
		l.closeFDs()
	}
	s.loops = nil
}

// shutdown stops accepting, lets every request in flight finish and
// closes the connections, or gives up on them when ctx ends.
func (s *loopServer) shutdown(ctx context.Context) {
	s.stopping.Store(true)
	for _, l := range s.loops {
		l.poke()
	}
	finished := make(chan struct{})
	go func() { s.done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		for _, l := range s.loops {
			l.abandon.Store(true)
			l.poke()
		}
		<-finished
	}
	s.closeLoops()
	for _, ln := range s.listeners {
		ln.file.Close()
	}
}

const (
	// loopBufferSize is the size of a connection's read and write
	// buffers, taken from the loop's free list while in use.
	loopBufferSize = 16 << 10
	// maxClientBuffered bounds what a client may send ahead: one head and
	// one body held in memory.
	maxClientBuffered = maxHeaderBytes + maxBufferedRequestBody
	// maxClientPending bounds the response bytes waiting for a slow
	// client; beyond it the backend is not read.
	maxClientPending = 256 << 10
	// minSweepInterval bounds how often the loop looks for connections
	// past their deadline.
	minSweepInterval = 10 * time.Millisecond
)

// loop is one event loop: an epoll instance and the connections in it.
// Everything but poke and the atomics is used by the loop's thread alone.
type loop struct {
	srv     *loopServer
	proxy   *Proxy
	epoll   int
	wake    int // eventfd that interrupts epoll_wait
	abandon atomic.Bool
	tid     atomic.Int32 // the loop's thread (for tests and debugging)

	conns map[int]*loopConn
	// idle holds the pooled backend connections per task, most recently
	// used last.
	idle    map[*endpoint][]*loopConn
	free    [][]byte // buffers of loopBufferSize
	clients int
	gen     uint32

	// scratch holds a response head (and body) being put together; fw
	// the forwarding fields of a request being put together.
	scratch []byte
	fw      forwarding
	// closedSeen is the loopServer's endpointsClosed last acted on.
	closedSeen uint64

	// resolved holds the clients whose backend set was resolved since the
	// loop last looked (afterResolution); fdsClosed says the loop is gone.
	resolvedMu sync.Mutex
	resolved   []*loopConn
	fdsClosed  bool

	now       time.Time
	nextSweep time.Time
	// acceptPausedUntil: the listeners rest after running out of
	// descriptors.
	acceptPausedUntil time.Time

	req  h1.Request
	resp h1.Response
}

// loopConn is a client or backend connection of a loop.
type loopConn struct {
	fd      int
	backend bool
	in, out []byte
	// readable: edge-triggered epoll reported data that was not read
	// yet (the loop stopped at a limit).
	readable bool
	// hup: epoll reported the peer's end of stream (or an error), so a
	// short read does not mean drained: no new edge will come.
	hup      bool
	eof      bool
	closed   bool
	deadline time.Time
	// sendDeadline: a client's out waits for the socket, whose peer must
	// take some of what was written by then (the send timeout, from the
	// last progress). sent counts the bytes written to the socket, taken
	// those the peer had acknowledged when last looked at (sent less
	// what the socket still holds).
	sendDeadline time.Time
	sent, taken  int64

	// A client's listener and address (for X-Forwarded-For), and its
	// request in flight.
	ln     *loopListener
	remote netip.Addr
	x      *exchange
	// closeWhenFlushed: the connection ends once out is written, after
	// lingering when lingerWhenFlushed; lingering: its write side is shut
	// and what it sends is dropped until it closes (or lingerTimeout).
	closeWhenFlushed, lingerWhenFlushed, lingering bool
	// waitingHead: part of a request arrived, and the head timeout runs;
	// waitingBody: its head is in, and the body idle timeout runs since
	// c.in held bodySeen bytes.
	waitingHead, waitingBody bool
	bodySeen                 int
	// awaitingBackends: the request's backend set is being resolved for
	// the first time (afterResolution).
	awaitingBackends bool
	xchg             exchange

	// A backend's task, and the exchange it serves (nil while pooled).
	ep         *endpoint
	connecting bool
	reused     bool
	inPool     bool
	served     *exchange

	// gen tells this connection's events from those of an earlier one
	// with the same descriptor, closed while its event was pending.
	gen uint32
}

func newLoop(s *loopServer) (*loop, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("event loop: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("event loop: %w", err)
	}
	l := &loop{srv: s, proxy: s.proxy, epoll: ep, wake: wake, conns: map[int]*loopConn{}, idle: map[*endpoint][]*loopConn{}}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}); err != nil {
		l.closeFDs()
		return nil, fmt.Errorf("event loop: %w", err)
	}
	if err := l.watchListeners(true); err != nil {
		l.closeFDs()
		return nil, fmt.Errorf("event loop: %w", err)
	}
	return l, nil
}

// watchListeners adds the listeners to the loop's epoll, or removes them.
func (l *loop) watchListeners(on bool) error {
	for _, ln := range l.srv.listeners {
		if !on {
			unix.EpollCtl(l.epoll, unix.EPOLL_CTL_DEL, ln.fd, nil)
			continue
		}
		// EPOLLEXCLUSIVE: a new connection wakes one loop, not all.
		if err := unix.EpollCtl(l.epoll, unix.EPOLL_CTL_ADD, ln.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLEXCLUSIVE, Fd: int32(ln.fd)}); err != nil {
			return err
		}
	}
	return nil
}

func (l *loop) closeFDs() {
	l.resolvedMu.Lock()
	defer l.resolvedMu.Unlock()
	l.fdsClosed = true
	unix.Close(l.wake)
	unix.Close(l.epoll)
}

// poke interrupts the loop's wait.
func (l *loop) poke() {
	l.resolvedMu.Lock()
	defer l.resolvedMu.Unlock()
	l.pokeLocked()
}

func (l *loop) pokeLocked() {
	if l.fdsClosed {
		return
	}
	var one = [8]byte{1}
	unix.Write(l.wake, one[:])
}

// afterResolution runs off the loop: once u has been resolved, it gives c
// back to its loop, whose next wake-up reads c's request again.
func (l *loop) afterResolution(u *upstream, c *loopConn) {
	<-u.resolved
	l.resolvedMu.Lock()
	defer l.resolvedMu.Unlock()
	l.resolved = append(l.resolved, c)
	l.pokeLocked()
}

// resume reads again the requests afterResolution gave back.
func (l *loop) resume() {
	l.resolvedMu.Lock()
	conns := l.resolved
	l.resolved = nil
	l.resolvedMu.Unlock()
	for _, c := range conns {
		if c.closed {
			continue
		}
		c.awaitingBackends = false
		l.nextRequest(c)
	}
}

func (l *loop) run() {
	defer l.srv.done.Done()
	// The loop's thread waits in epoll_wait; no other goroutine needs it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l.tid.Store(int32(unix.Gettid()))
	events := make([]unix.EpollEvent, 256)
	stopping := false
	l.now = time.Now()
	l.nextSweep = l.now.Add(time.Second)
	for {
		timeout := max(0, int(l.nextSweep.Sub(l.now)/time.Millisecond)+1)
		n, err := waitEvents(l.epoll, events, timeout)
		l.now = time.Now()
		switch {
		case err == unix.EINTR:
			// A signal (the runtime's SIGURG, for one) interrupted the
			// wait: no events, n is -1.
			n = 0
		case err != nil:
			l.srv.log.Error("event loop stopped", "err", err)
			l.closeAll()
			return
		}
		l.handle(events[:n], stopping)
		if !l.acceptPausedUntil.IsZero() && !l.now.Before(l.acceptPausedUntil) {
			l.acceptPausedUntil = time.Time{}
			if !stopping {
				l.watchListeners(true)
			}
		}
		if l.srv.stopping.Load() {
			if !stopping {
				stopping = true
				l.watchListeners(false)
			}
			if l.drain() {
				return
			}
		}
	}
}

// handle acts on the events of one wait, and on the deadlines passed. A
// panic (a defect) costs the loop's connections, not the gateway: it is
// logged with its stack, every connection of the loop is closed, and the
// loop goes on.
func (l *loop) handle(events []unix.EpollEvent, stopping bool) {
	defer func() {
		if v := recover(); v != nil {
			l.srv.log.Error("event loop panicked: its connections are closed", "panic", v, "stack", string(debug.Stack()))
			l.closeAll()
		}
	}()
	for i := range events {
		ev := &events[i]
		fd := int(ev.Fd)
		if fd == l.wake {
			var b [8]byte
			unix.Read(l.wake, b[:])
			l.resume()
			l.dropClosedIdle()
			continue
		}
		if c := l.conns[fd]; c != nil {
			if c.gen == uint32(ev.Pad) {
				l.event(c, ev.Events)
			}
			continue
		}
		if !stopping {
			for _, ln := range l.srv.listeners {
				if ln.fd == fd {
					l.accept(ln)
				}
			}
		}
	}
	if !l.now.Before(l.nextSweep) {
		l.sweep()
	}
}

// drain closes the clients that wait for nothing and reports whether none
// is left; after abandon it closes every connection.
func (l *loop) drain() bool {
	abandon := l.abandon.Load()
	for _, c := range l.conns {
		if !c.backend && (abandon || c.x == nil && len(c.out) == 0) {
			l.closeClient(c)
		}
	}
	if l.clients > 0 {
		return false
	}
	l.closeAll()
	return true
}

func (l *loop) closeAll() {
	for _, c := range l.conns {
		l.closeConn(c)
	}
	clear(l.idle)
}

// accept takes one new connection: the listener stays readable while more
// wait, and taking them one per wake-up spreads a burst over the loops.
func (l *loop) accept(ln *loopListener) {
	fd, sa, err := unix.Accept4(ln.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
	switch {
	case err == unix.EMFILE || err == unix.ENFILE || err == unix.ENOBUFS || err == unix.ENOMEM:
		// Out of descriptors or memory: the listener would wake the loop
		// again at once. It rests for a second, as nginx's does.
		l.srv.log.Warn("accept paused for a second", "err", err)
		l.watchListeners(false)
		l.acceptPausedUntil = l.now.Add(time.Second)
		l.watch(l.acceptPausedUntil)
		return
	case err != nil:
		if err != unix.EAGAIN && err != unix.ECONNABORTED && err != unix.EINTR {
			l.srv.log.Warn("accept", "err", err)
		}
		return
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c := &loopConn{fd: fd, ln: ln, remote: sockaddrIP(sa), deadline: l.now.Add(clientIdleTimeout)}
	if err := l.register(c); err != nil {
		unix.Close(fd)
		return
	}
	l.clients++
}

func sockaddrIP(sa unix.Sockaddr) netip.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(a.Addr)
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(a.Addr).Unmap()
	}
	return netip.Addr{}
}

// register adds c to the loop, edge-triggered for reads and writes: an
// event comes when data arrives or buffer space frees up, and the loop
// reads and writes until the kernel says EAGAIN.
func (l *loop) register(c *loopConn) error {
	l.gen++
	c.gen = l.gen
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(c.fd), Pad: int32(c.gen)}
	if err := unix.EpollCtl(l.epoll, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		return err
	}
	l.conns[c.fd] = c
	l.watch(c.deadline)
	return nil
}

// watch makes the loop wake up by t.
func (l *loop) watch(t time.Time) {
	if !t.IsZero() && t.Before(l.nextSweep) {
		l.nextSweep = t
	}
}

func (l *loop) setDeadline(c *loopConn, d time.Duration) {
	c.deadline = l.now.Add(d)
	l.watch(c.deadline)
}

// event handles readiness of a client or backend connection.
func (l *loop) event(c *loopConn, events uint32) {
	if c.connecting && !l.connectDone(c, events) {
		return
	}
	if events&unix.EPOLLOUT != 0 && len(c.out) > 0 {
		l.flush(c)
		if c.closed {
			return
		}
	}
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
		return
	}
	c.readable = true
	c.hup = c.hup || events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
	if c.backend {
		l.backendReadable(c)
	} else {
		l.clientReadable(c)
	}
}

// fill reads what c's socket holds into c.in, up to limit bytes in c.in.
func (l *loop) fill(c *loopConn, limit int) {
	for c.readable && !c.eof && len(c.in) < limit {
		if cap(c.in)-len(c.in) < loopBufferSize/4 {
			c.in = l.grow(c.in)
		}
		room := c.in[len(c.in):min(cap(c.in), limit)]
		n, err := rawRead(c.fd, room)
		switch {
		case n > 0:
			c.in = c.in[:len(c.in)+n]
			if n < len(room) && !c.hup {
				// Drained: the next arrival raises a new edge.
				c.readable = false
			}
		case err == unix.EAGAIN:
			c.readable = false
		case err == unix.EINTR:
		default:
			// End of stream or a reset.
			c.eof, c.readable = true, false
		}
	}
	if len(c.in) == 0 {
		c.in = l.release(c.in)
	}
}

// grow returns b with more room: a buffer from the free list for an
// empty b, otherwise a larger copy.
func (l *loop) grow(b []byte) []byte {
	if cap(b) == 0 {
		if n := len(l.free); n > 0 {
			buf := l.free[n-1]
			l.free = l.free[:n-1]
			return buf[:0]
		}
		return make([]byte, 0, loopBufferSize)
	}
	bigger := make([]byte, len(b), 2*cap(b))
	copy(bigger, b)
	l.release(b[:0])
	return bigger
}

// release returns an empty buffer of the standard size to the free list.
func (l *loop) release(b []byte) []byte {
	if cap(b) == loopBufferSize && len(l.free) < 1024 {
		l.free = append(l.free, b[:0])
	}
	return nil
}

// consume drops the first n bytes of c.in.
func (l *loop) consume(c *loopConn, n int) {
	rest := copy(c.in, c.in[n:])
	c.in = c.in[:rest]
	if rest == 0 {
		c.in = l.release(c.in)
	}
}

// send queues p for c and writes what the socket takes.
func (l *loop) send(c *loopConn, p []byte) {
	if len(c.out) == 0 {
		// Nothing queued: write straight from p.
		n, err := l.write(c, p)
		if err != nil || n == len(p) {
			return
		}
		p = p[n:]
	}
	if cap(c.out) == 0 && len(p) <= loopBufferSize {
		c.out = l.grow(nil)
	}
	if len(c.out) == 0 && !c.backend {
		l.waitSend(c)
	}
	c.out = append(c.out, p...)
}

// waitSend starts the send timeout of a client whose socket does not
// take what is written to it.
func (l *loop) waitSend(c *loopConn) {
	c.taken = c.sent - int64(unsent(c.fd))
	c.sendDeadline = l.now.Add(l.proxy.limits.send())
	l.watch(c.sendDeadline)
}

// sendExpired handles a client whose send timeout passed: one whose peer
// took bytes meanwhile (a slow reader, whose progress edge-triggered
// writability may not show: the socket's buffer is large) gets the
// timeout again; one that took nothing is closed, and the backend of its
// response with it (never pooled).
func (l *loop) sendExpired(c *loopConn) {
	if taken := c.sent - int64(unsent(c.fd)); taken > c.taken {
		c.taken = taken
		c.sendDeadline = l.now.Add(l.proxy.limits.send())
		return
	}
	l.closeClient(c)
}

// unsent returns the bytes fd's socket holds that its peer has not
// acknowledged.
func unsent(fd int) int {
	n, err := unix.IoctlGetInt(fd, unix.TIOCOUTQ)
	if err != nil {
		return 0
	}
	return n
}

// write writes p to c's socket, closing c on error; it returns how much
// the kernel took.
func (l *loop) write(c *loopConn, p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n, err := rawWrite(c.fd, p[written:])
		if n > 0 {
			written += n
			continue
		}
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			c.sent += int64(written)
			return written, nil
		}
		if err == nil {
			err = unix.EPIPE
		}
		l.writeFailed(c, err)
		return written, err
	}
	c.sent += int64(written)
	return written, nil
}

// flush writes c.out, as far as the socket takes it.
func (l *loop) flush(c *loopConn) {
	n, err := l.write(c, c.out)
	if err != nil {
		return
	}
	l.consumeOut(c, n)
	if c.backend {
		return
	}
	if len(c.out) > 0 {
		return
	}
	c.sendDeadline = time.Time{}
	if c.closeWhenFlushed {
		l.endClient(c)
		return
	}
	l.clientFlushed(c)
}

func (l *loop) consumeOut(c *loopConn, n int) {
	rest := copy(c.out, c.out[n:])
	c.out = c.out[:rest]
	if rest == 0 {
		c.out = l.release(c.out)
	}
}

func (l *loop) writeFailed(c *loopConn, err error) {
	if c.backend {
		l.backendFailed(c, err)
		return
	}
	l.closeClient(c)
}

// sweep acts on the connections past their deadline and finds the next
// one.
func (l *loop) sweep() {
	next := l.now.Add(time.Second)
	for _, c := range l.conns {
		if !c.sendDeadline.IsZero() && !c.closed {
			if !c.sendDeadline.After(l.now) {
				if l.sendExpired(c); c.closed {
					continue
				}
			}
			if c.sendDeadline.Before(next) {
				next = c.sendDeadline
			}
		}
		if c.deadline.IsZero() || c.closed {
			continue
		}
		if !c.deadline.After(l.now) {
			l.expired(c)
			continue
		}
		if c.deadline.Before(next) {
			next = c.deadline
		}
	}
	if soonest := l.now.Add(minSweepInterval); next.Before(soonest) {
		next = soonest
	}
	l.nextSweep = next
}

// expired handles a connection whose deadline passed.
func (l *loop) expired(c *loopConn) {
	if !c.backend {
		if c.waitingBody {
			// A body that stopped coming: 408, then the connection
			// closes (within the head timeout if the client does not
			// take the answer).
			c.waitingBody = false
			l.refuse(c, http.StatusRequestTimeout)
			if !c.closed {
				l.setDeadline(c, clientHeadTimeout)
			}
			return
		}
		// Idle, or too slow to send a request head.
		l.closeClient(c)
		return
	}
	switch {
	case c.served == nil:
		l.closeBackend(c) // idle in the pool too long
	case c.connecting:
		l.backendFailed(c, &net.OpError{Op: "dial", Net: "tcp", Err: errDialTimeout})
	default:
		l.backendFailed(c, errResponseHeaderTimeout)
	}
}

// closeConn closes c's socket and forgets it.
func (l *loop) closeConn(c *loopConn) {
	if c.closed {
		return
	}
	c.closed = true
	delete(l.conns, c.fd)
	unix.Close(c.fd)
	c.in = l.release(c.in)
	c.out = l.release(c.out)
	if !c.backend {
		l.clients--
	}
}

func (l *loop) closeClient(c *loopConn) {
	if c.closed {
		return
	}
	if x := c.x; x != nil && x.backend != nil {
		// A response still coming cannot go anywhere now.
		b := x.backend
		x.backend, b.served = nil, nil
		l.closeConn(b)
	}
	c.x = nil
	l.closeConn(c)
}

// handOver passes c, from the request at the start of c.in on, to the
// goroutine HTTP/1 server (conn.go).
func (l *loop) handOver(c *loopConn) {
	unix.EpollCtl(l.epoll, unix.EPOLL_CTL_DEL, c.fd, nil)
	delete(l.conns, c.fd)
	l.clients--
	c.closed = true
	pending := append([]byte(nil), c.in...)
	c.in = l.release(c.in)
	f := os.NewFile(uintptr(c.fd), "client")
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		l.srv.log.Warn("hand connection over", "err", err)
		return
	}
	go l.srv.handOff(withSendTimeout(nc, l.proxy.limits.send()), c.ln.kind, pending)
}

// dial starts a non-blocking connection to e.
func (l *loop) dial(e *endpoint) (*loopConn, error) {
	ap := e.addrPort
	if !ap.IsValid() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("bad backend address %q", e.addr)}
	}
	var sa unix.Sockaddr
	family := unix.AF_INET
	if ap.Addr().Is4() {
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", err)}
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	b := &loopConn{fd: fd, backend: true, ep: e}
	switch err := unix.Connect(fd, sa); {
	case err == nil:
		e.up.connected()
	case err == unix.EINPROGRESS || err == unix.EINTR:
		// Under way (after EINTR too, the kernel goes on connecting).
		b.connecting = true
	default:
		unix.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	if err := l.register(b); err != nil {
		unix.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	return b, nil
}

// pooled returns an idle connection to e, or nil.
func (l *loop) pooled(e *endpoint) *loopConn {
	conns := l.idle[e]
	for len(conns) > 0 {
		b := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		conns = conns[:len(conns)-1]
		b.inPool = false
		if b.closed {
			continue
		}
		l.setIdle(e, conns)
		return b
	}
	l.setIdle(e, conns)
	return nil
}

func (l *loop) setIdle(e *endpoint, conns []*loopConn) {
	if len(conns) == 0 {
		delete(l.idle, e)
		return
	}
	l.idle[e] = conns
}

// pool keeps b for the next request to its task.
func (l *loop) pool(b *loopConn) {
	conns := l.idle[b.ep]
	if len(conns) >= maxIdlePerEndpoint || l.srv.stopping.Load() || b.ep.closed.Load() {
		l.closeConn(b)
		return
	}
	b.served, b.inPool = nil, true
	l.setDeadline(b, backendIdleTimeout)
	l.idle[b.ep] = append(conns, b)
}

// dropClosedIdle closes the idle connections to endpoints that closed
// (endpoint.close), once after each close.
func (l *loop) dropClosedIdle() {
	seen := l.srv.endpointsClosed.Load()
	if seen == l.closedSeen {
		return
	}
	l.closedSeen = seen
	for e, conns := range l.idle {
		if !e.closed.Load() {
			continue
		}
		for _, b := range conns {
			b.inPool = false
			l.closeConn(b)
		}
		delete(l.idle, e)
	}
}

// closeBackend closes a backend connection, pooled or not.
func (l *loop) closeBackend(b *loopConn) {
	l.closeConn(b)
	if !b.inPool {
		return
	}
	b.inPool = false
	conns := l.idle[b.ep]
	for i, p := range conns {
		if p == b {
			l.setIdle(b.ep, append(conns[:i], conns[i+1:]...))
			break
		}
	}
}

// connectDone finishes a backend connection in progress once epoll says
// how it went, and reports whether the connection is up.
func (l *loop) connectDone(b *loopConn, events uint32) bool {
	if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
		return false
	}
	errno, err := unix.GetsockoptInt(b.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && errno != 0 {
		err = unix.Errno(errno)
	}
	if err != nil {
		l.backendFailed(b, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)})
		return false
	}
	b.connecting = false
	b.ep.up.connected()
	l.connected(b)
	return !b.closed
}
