package ingress

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mholt/acmez/v3"
)

// server serves every connection the event loops do not: those of the
// TLS listener, whose handshakes it makes itself, and every plain-HTTP
// connection an event loop hands over. HTTP/1 connections are served by
// the goroutine HTTP/1 server (conn.go), HTTP/2 ones by net/http's HTTP/2
// server, for which the server is the net.Listener its http.Server
// accepts from.
type server struct {
	proxy  *Proxy
	http   *http.Server
	log    *slog.Logger
	tls    *tls.Config
	conns  chan net.Conn
	done   chan struct{}
	closed sync.Once
	wg     sync.WaitGroup // handshakes

	// The HTTP/1 connections being served; stopping says the server is
	// shutting down (they end after the request in flight).
	mu       sync.Mutex
	h1       map[*h1conn]struct{}
	h1wg     sync.WaitGroup
	stopping atomic.Bool
}

// http2 settings: as many streams per connection as browsers open at once
// and then some, and read frames up to 64 KiB.
const (
	http2MaxStreams   = 250
	http2MaxReadFrame = 64 << 10
)

func newServer(p *Proxy, log *slog.Logger) *server {
	s := &server{proxy: p, log: log, conns: make(chan net.Conn), done: make(chan struct{}), h1: map[*h1conn]struct{}{}}
	s.http = &http.Server{
		Handler:           p,
		ConnContext:       connContext,
		ReadHeaderTimeout: clientHeadTimeout,
		IdleTimeout:       clientIdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// No write timeout: streams and websockets stay open as long as
		// the application keeps them open.
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: http2MaxStreams,
			MaxReadFrameSize:     http2MaxReadFrame,
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return s
}

// Accept, Close and Addr make the server the listener of its http.Server.
func (s *server) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

func (s *server) Close() error {
	s.closed.Do(func() { close(s.done) })
	return nil
}

func (s *server) Addr() net.Addr { return &net.TCPAddr{} }

// serve runs the http.Server until shutdown.
func (s *server) serve() error {
	err := s.http.Serve(s)
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// take hands c over to net/http; it is closed if the server has stopped.
func (s *server) take(c net.Conn) {
	select {
	case s.conns <- c:
	case <-s.done:
		c.Close()
	}
}

// serveTLS accepts on ln, the TLS listener, until it is closed.
func (s *server) serveTLS(ln net.Listener, cfg *tls.Config) error {
	s.tls = cfg
	return s.accept(ln, func(c net.Conn) {
		s.wg.Add(1)
		go s.handshake(c)
	})
}

// Accepting rests after an error such as running out of descriptors, as
// net/http's does: from the first delay, doubling, up to the last.
const (
	acceptRetryFirst = 5 * time.Millisecond
	acceptRetryMax   = time.Second
)

// accept gives serve every connection ln accepts until it is closed (or
// the server stops).
func (s *server) accept(ln net.Listener, serve func(net.Conn)) error {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, acceptRetryFirst), acceptRetryMax)
				s.log.Warn("accept", "err", err, "retry_in", backoff)
				select {
				case <-time.After(backoff):
				case <-s.done:
					return nil
				}
				continue
			}
			return err
		}
		backoff = 0
		serve(c)
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// handshake makes c's TLS handshake and serves the connection: HTTP/2 by
// net/http, HTTP/1.1 here; an ACME TLS-ALPN challenge (whose handshake was
// the answer) is over.
func (s *server) handshake(c net.Conn) {
	defer s.wg.Done()
	tc := tls.Server(c, s.tls)
	c.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		var re tls.RecordHeaderError
		if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
			io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
		}
		c.Close()
		return
	}
	c.SetDeadline(time.Time{})
	switch tc.ConnectionState().NegotiatedProtocol {
	case "h2":
		s.take(tc)
	case acmez.ACMETLS1Protocol:
		tc.Close()
	default:
		s.serveHTTP1(tc, ListenerHTTPS, nil)
	}
}

// track records an HTTP/1 connection being served; false once the server
// is shutting down.
func (s *server) track(c *h1conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping.Load() {
		return false
	}
	s.h1[c] = struct{}{}
	s.h1wg.Add(1)
	return true
}

func (s *server) untrack(c *h1conn) {
	s.mu.Lock()
	delete(s.h1, c)
	s.mu.Unlock()
	s.h1wg.Done()
}

// looksLikeHTTP says whether the first five bytes of a would-be TLS
// record are the start of a plain HTTP request.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// shutdown stops accepting, lets requests in flight finish until ctx ends
// and closes the connections.
func (s *server) shutdown(ctx context.Context) {
	s.Close()
	s.mu.Lock()
	s.stopping.Store(true)
	for c := range s.h1 {
		if c.idle.Load() {
			// Waiting for a request: wake it up to end.
			c.conn.SetReadDeadline(aLongTimeAgo)
		}
	}
	s.mu.Unlock()
	s.http.Shutdown(ctx)
	waited := make(chan struct{})
	go func() { s.wg.Wait(); s.h1wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.h1 {
			c.conn.Close()
		}
		s.mu.Unlock()
	}
}
