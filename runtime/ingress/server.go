package ingress

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mholt/acmez/v3"

	"github.com/slipwayhq/slipway/runtime/ingress/internal/h2"
)

// server serves every connection the event loops do not: those of the
// TLS listener, whose handshakes it makes itself, and every plain-HTTP
// connection an event loop hands over. HTTP/1 connections are served by
// the goroutine HTTP/1 server (conn.go), HTTP/2 ones by the gateway's own
// HTTP/2 server (internal/h2) with the Proxy as its handler.
type server struct {
	proxy  *Proxy
	h2     *h2.Server
	log    *slog.Logger
	tls    *tls.Config
	done   chan struct{}
	closed sync.Once
	wg     sync.WaitGroup // handshakes and the connections they serve

	// The HTTP/1 connections being served; stopping says the server is
	// shutting down (they end after the request in flight).
	mu       sync.Mutex
	h1       map[*h1conn]struct{}
	h1wg     sync.WaitGroup
	stopping atomic.Bool
}

// http2 settings: as many streams per connection as browsers open at once
// and then some, read frames up to 64 KiB, and a window of 1 MiB per
// stream and per connection (what is buffered of request bodies).
const (
	http2MaxStreams   = 250
	http2MaxReadFrame = 64 << 10
	http2Window       = 1 << 20
)

func newServer(p *Proxy, log *slog.Logger) *server {
	s := &server{proxy: p, log: log, done: make(chan struct{}), h1: map[*h1conn]struct{}{}}
	s.h2 = &h2.Server{
		Handler:           p,
		Log:               log,
		MaxStreams:        http2MaxStreams,
		MaxReadFrameSize:  http2MaxReadFrame,
		MaxHeaderListSize: maxHeaderBytes,
		Window:            http2Window,
		PrefaceTimeout:    clientHeadTimeout,
		IdleTimeout:       clientIdleTimeout,
	}
	return s
}

// Close stops the server's accepting.
func (s *server) Close() error {
	s.closed.Do(func() { close(s.done) })
	return nil
}

// serve waits until shutdown (the connections are served by the
// goroutines of their listeners).
func (s *server) serve() error {
	<-s.done
	return nil
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

// accept gives serve every connection ln accepts, its writes with the
// send timeout (send.go), until it is closed (or the server stops).
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
		serve(withSendTimeout(c, s.proxy.limits.send()))
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// handshake makes c's TLS handshake and serves the connection: HTTP/2 by
// internal/h2, HTTP/1.1 here; an ACME TLS-ALPN challenge (whose handshake was
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
		s.h2.ServeConn(tc, connContext(context.Background(), tc))
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
	s.h2.Shutdown()
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
		s.h2.Close()
	}
}
