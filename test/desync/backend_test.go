package desync

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// backend is the origin behind a proxy. It reads requests with net/http's
// parser and records each one as it arrives (method, target, headers, the
// body bytes as they come, and how the body ended), and answers by the
// first segment of the path:
//
//	/echo/...              200 with "echo METHOD TARGET conn=N body=LEN"
//	/stream-chunked/...    an endless chunked response (see stream)
//	/stream-length/...     an endless response under a 64 MiB Content-Length
//	/stream-sse/...        an endless text/event-stream
//	/die-mid-chunk/...     a chunked response cut inside a chunk
//	/die-between-chunks/.. a chunked response cut after a whole chunk
//	/die-mid-length/...    a response cut before its Content-Length
//
// Anything else is echoed too.
type backend struct {
	ln   net.Listener
	port int

	mu      sync.Mutex
	conns   int
	reqs    []*received
	streams []*streamed
	changed chan struct{} // closed and replaced on every change
}

// received is one request as the backend read it.
type received struct {
	Conn                  int
	Method, Target, Proto string
	Host                  string
	Header                http.Header
	Body                  []byte
	BodyDone              bool  // the body ended (BodyErr says how)
	BodyErr               error // nil: the whole body arrived
	ContentLength         int64
	TransferEncoding      []string
}

// streamed is what became of one endless response.
type streamed struct {
	Conn   int
	Target string
	Sent   int64
	// Outcome is "" while streaming, "closed" when the proxy closed the
	// connection, "reused" when a new request arrived on it while the
	// response was unfinished, "held" when the proxy neither closed nor
	// reused it within streamCap.
	Outcome string
}

// streamCap bounds an endless response: a proxy that keeps a backend
// connection this long after its client left holds it for good.
const streamCap = 20 * time.Second

// newBackend starts a backend on loopback; it panics when it cannot
// listen, as it is made before any test runs.
func newBackend() *backend {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	b := &backend{ln: ln, port: ln.Addr().(*net.TCPAddr).Port, changed: make(chan struct{})}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go b.serve(c)
		}
	}()
	return b
}

func (b *backend) close() { b.ln.Close() }

// update changes the backend's records under its lock and wakes waiters.
func (b *backend) update(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f()
	close(b.changed)
	b.changed = make(chan struct{})
}

// waitFor waits until cond (called under the lock) holds, at most d; it
// reports whether it held.
func (b *backend) waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		ok, ch := cond(), b.changed
		b.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// requests returns copies of the requests whose target contains token.
func (b *backend) requests(token string) []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []received
	for _, r := range b.reqs {
		if strings.Contains(r.Target, token) {
			c := *r
			c.Body = append([]byte(nil), r.Body...)
			out = append(out, c)
		}
	}
	return out
}

// request waits up to d for a request whose target contains token.
func (b *backend) request(token string, d time.Duration) (received, bool) {
	var got received
	ok := b.waitFor(d, func() bool {
		for _, r := range b.reqs {
			if strings.Contains(r.Target, token) {
				got = *r
				got.Body = append([]byte(nil), r.Body...)
				return true
			}
		}
		return false
	})
	return got, ok
}

// streamOf returns the endless response whose target contains token.
func (b *backend) streamOf(token string) (streamed, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.streams {
		if strings.Contains(s.Target, token) {
			return *s, true
		}
	}
	return streamed{}, false
}

func (b *backend) serve(c net.Conn) {
	defer c.Close()
	var id int
	b.update(func() { b.conns++; id = b.conns })
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		rec := &received{Conn: id, Method: req.Method, Target: req.RequestURI, Proto: req.Proto, Host: req.Host,
			Header: req.Header.Clone(), ContentLength: req.ContentLength, TransferEncoding: req.TransferEncoding}
		b.update(func() { b.reqs = append(b.reqs, rec) })
		b.readBody(req, rec)
		if rec.BodyErr != nil {
			return
		}
		kind, _, _ := strings.Cut(strings.TrimPrefix(req.URL.Path, "/"), "/")
		switch kind {
		case "stream-chunked", "stream-length", "stream-sse":
			if !b.stream(c, br, id, req, kind) {
				return
			}
		case "die-mid-chunk":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n"+strings.Repeat("x", 100))
			return
		case "die-between-chunks":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n"+strings.Repeat("x", 100)+"\r\n")
			return
		case "die-mid-length":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1024\r\n\r\n"+strings.Repeat("x", 100))
			return
		default:
			body := fmt.Sprintf("echo %s %s conn=%d body=%d", req.Method, req.RequestURI, id, len(rec.Body))
			head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n", len(body))
			if req.Close {
				head += "Connection: close\r\n"
			}
			if _, err := io.WriteString(c, head+"\r\n"+body); err != nil || req.Close {
				return
			}
		}
	}
}

// readBody reads the request body, recording the bytes as they arrive,
// so a test sees how far a body got while it is still coming.
func (b *backend) readBody(req *http.Request, rec *received) {
	buf := make([]byte, 32<<10)
	for {
		n, err := req.Body.Read(buf)
		if n > 0 {
			b.update(func() { rec.Body = append(rec.Body, buf[:n]...) })
		}
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			b.update(func() { rec.BodyDone, rec.BodyErr = true, err })
			return
		}
	}
}

// poisonPiece is what an endless response repeats: to whoever reads the
// connection after the response was abandoned it looks like a response
// of its own, which sets the attacker's cookie.
const poisonPiece = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nSet-Cookie: session=attacker\r\nContent-Length: 15\r\n\r\n<h1>POISON</h1>"

// stream answers with an endless response, in pieces every few
// milliseconds, until the proxy closes the connection, sends the next
// request on it (the response unfinished: the connection was pooled with
// bytes left in it), or streamCap passes. It reports whether the
// connection should go on serving: only after a reuse, whose request is
// then answered after the leftover bytes, as a poisoned connection
// would answer it.
func (b *backend) stream(c net.Conn, br *bufio.Reader, id int, req *http.Request, kind string) bool {
	s := &streamed{Conn: id, Target: req.RequestURI}
	b.update(func() { b.streams = append(b.streams, s) })
	var head, piece string
	switch kind {
	case "stream-chunked":
		head = "Transfer-Encoding: chunked\r\nContent-Type: text/html\r\nSet-Cookie: session=attacker\r\n"
		piece = fmt.Sprintf("%x\r\n%s\r\n", len(poisonPiece), poisonPiece)
	case "stream-length":
		head = fmt.Sprintf("Content-Length: %d\r\nContent-Type: text/html\r\nSet-Cookie: session=attacker\r\n", 64<<20)
		piece = poisonPiece
	case "stream-sse":
		// X-Accel-Buffering: as an application behind nginx asks for
		// events to pass at once.
		head = "Transfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\n"
		event := "data: " + strings.ReplaceAll(poisonPiece, "\r\n", " ") + "\n\n"
		piece = fmt.Sprintf("%x\r\n%s\r\n", len(event), event)
	}
	// Pieces of about 4 KiB, every 2 ms: a slow download or a busy event
	// stream.
	piece = strings.Repeat(piece, 4096/len(piece)+1)
	if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\n"+head+"\r\n"); err != nil {
		b.update(func() { s.Outcome = "closed" })
		return false
	}
	outcome := make(chan string, 1)
	go func() {
		// Nothing is due from the proxy until the response ends: bytes
		// now are the next request on a connection it pooled.
		if _, err := br.Peek(1); err != nil {
			outcome <- "closed"
		} else {
			outcome <- "reused"
		}
	}()
	written := make(chan error, 1)
	capTimer := time.NewTimer(streamCap)
	defer capTimer.Stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		go func() {
			_, err := io.WriteString(c, piece)
			written <- err
		}()
		select {
		case err := <-written:
			if err != nil {
				b.update(func() { s.Outcome = "closed" })
				return false
			}
			b.update(func() { s.Sent += int64(len(piece)) })
		case o := <-outcome:
			b.update(func() { s.Outcome = o })
			if o == "closed" {
				return false
			}
			// Let the write in flight end (the proxy reads the connection
			// for its next response), then answer the next request.
			select {
			case err := <-written:
				return err == nil
			case <-capTimer.C:
				return false
			}
		case <-capTimer.C:
			b.update(func() { s.Outcome = "held" })
			return false
		}
		select {
		case <-tick.C:
		case o := <-outcome:
			b.update(func() { s.Outcome = o })
			return o == "reused"
		case <-capTimer.C:
			b.update(func() { s.Outcome = "held" })
			return false
		}
	}
}
