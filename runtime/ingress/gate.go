package ingress

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/slipwayhq/slipway/runtime/ingress/internal/h1"
)

// gate is an HTTP/1 client connection as net/http reads it: every request
// head passes h1.ParseRequest before net/http sees a byte of it, and each
// body is followed with the same framing (its Content-Length, or
// h1.Chunked), so that net/http reads exactly the requests the strict
// parser accepted, each starting where the parser says. A head the parser
// refuses never reaches net/http, which is more lenient (obs-fold,
// Content-Length with Transfer-Encoding, a repeated Content-Length): net/http
// reads a stand-in request in its place instead, which the handler answers
// with the refusal (400, 431, 501 or 505) and Connection: close, after
// which the gate reads nothing more. A protocol switch (a websocket) lets
// bytes pass unchecked from then on.
//
// net/http reads a connection from one goroutine at a time, so Read needs
// no lock; refusal and passthrough are atomics, set or read by others.
type gate struct {
	net.Conn
	kind Listener

	// buf holds what was read from Conn and not given to net/http yet;
	// its first avail bytes are checked and may pass. mem is the array
	// buf is read into while a head is awaited.
	buf   []byte
	mem   []byte
	avail int
	state gateState
	// remaining is what is left of a body with a length.
	remaining int64
	chunked   h1.Chunked
	req       h1.Request

	refused atomic.Int32 // the status a refused head gets
	passing atomic.Bool  // the protocol switched: no more HTTP/1
}

type gateState uint8

const (
	gateHead gateState = iota
	gateLength
	gateChunked
	// gateRefused: the stand-in request is being given; then EOF.
	gateRefused
	// gateBroken: a chunked body broke its framing; reads fail.
	gateBroken
)

// gateBufferSize is what the gate reads at once while it waits for a head.
const gateBufferSize = 4 << 10

var errBrokenChunk = errors.New("malformed chunked request body")

// refusalToken marks the stand-in request of a refused head: the handler
// believes the refusal only with it, so that a request the gate passed
// earlier (whose handler may run while the gate already reads the next
// head) is never mistaken for it. Clients cannot know it.
var refusalToken = func() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}()

const refusalField = "X-Slipway-Gate-Refusal"

// standIn is the request net/http reads in place of a refused head.
var standIn = []byte("GET / HTTP/1.1\r\nHost: refused.invalid\r\n" + refusalField + ": " + refusalToken + "\r\nConnection: close\r\n\r\n")

// newGate wraps an HTTP/1 connection of a listener; read holds what was
// already read from it (an event loop's bytes), to be read first.
func newGate(c net.Conn, kind Listener, read []byte) *gate {
	return &gate{Conn: c, kind: kind, buf: read}
}

// refusal returns the status to answer r with when r is the stand-in of
// a refused head, otherwise 0.
func (g *gate) refusal(r *http.Request) int {
	status := int(g.refused.Load())
	if status == 0 || r.Header.Get(refusalField) != refusalToken {
		return 0
	}
	return status
}

// CloseWrite shuts the connection's write side, which net/http does before
// it closes a connection it answered with Connection: close, so that the
// client reads the answer before the connection is reset.
func (g *gate) CloseWrite() error {
	if cw, ok := g.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// passthrough stops checking: the connection switched protocols.
func (g *gate) passthrough() { g.passing.Store(true) }

func (g *gate) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if g.avail > 0 {
			n := copy(p, g.buf[:g.avail])
			g.avail -= n
			g.consume(n)
			return n, nil
		}
		if g.passing.Load() {
			if len(g.buf) > 0 {
				n := copy(p, g.buf)
				g.consume(n)
				return n, nil
			}
			return g.Conn.Read(p)
		}
		switch g.state {
		case gateRefused:
			return 0, io.EOF
		case gateBroken:
			return 0, errBrokenChunk
		case gateLength:
			if len(g.buf) == 0 {
				// A body with a length goes straight through.
				n, err := g.Conn.Read(p[:min(int64(len(p)), g.remaining)])
				g.bodyRead(int64(n))
				return n, err
			}
			n := min(int64(len(g.buf)), g.remaining)
			g.avail = int(n)
			g.bodyRead(n)
		case gateChunked:
			if len(g.buf) == 0 {
				n, err := g.Conn.Read(p)
				if n == 0 {
					return 0, err
				}
				k := g.scanChunked(p[:n])
				// Bytes past the body's end begin the next head.
				g.buf = append(g.buf, p[k:n]...)
				if k > 0 {
					return k, nil
				}
				continue
			}
			g.avail = g.scanChunked(g.buf)
			if g.avail == 0 && g.state == gateBroken {
				continue
			}
		case gateHead:
			if len(g.buf) > 0 {
				switch err := h1.ParseRequest(g.buf, maxHeaderBytes, &g.req); {
				case err == nil:
					g.avail = g.req.HeadLen
					switch {
					case g.req.TransferEncoding:
						g.state, g.chunked = gateChunked, h1.Chunked{}
					case g.req.ContentLength > 0:
						g.state, g.remaining = gateLength, g.req.ContentLength
					}
					continue
				case err != h1.ErrIncomplete:
					g.refuse(h1.Status(err))
					continue
				}
			}
			if err := g.fill(); err != nil {
				return 0, err
			}
		}
	}
}

// bodyRead counts n bytes of a body with a length.
func (g *gate) bodyRead(n int64) {
	if g.remaining -= n; g.remaining == 0 {
		g.state = gateHead
	}
}

// scanChunked follows a chunked body through b and returns how many of
// its bytes belong to it; at its end the next head is due, and when it
// breaks its framing nothing more passes.
func (g *gate) scanChunked(b []byte) int {
	n, done, err := g.chunked.Scan(b)
	switch {
	case err != nil:
		g.state = gateBroken
	case done:
		g.state = gateHead
	}
	return n
}

// fill reads more of a head into buf.
func (g *gate) fill() error {
	if len(g.buf) == cap(g.buf) {
		// Move what waits to the front of mem (a larger one when it is
		// half full: a head may take up to maxHeaderBytes).
		size := max(len(g.mem), gateBufferSize)
		if len(g.buf) >= size/2 {
			size = min(2*size, maxHeaderBytes+gateBufferSize)
		}
		if size > len(g.mem) {
			g.mem = make([]byte, size)
		}
		g.buf = g.mem[:copy(g.mem, g.buf)]
	}
	n, err := g.Conn.Read(g.buf[len(g.buf):cap(g.buf)])
	g.buf = g.buf[:len(g.buf)+n]
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// consume drops the first n bytes of buf.
func (g *gate) consume(n int) {
	g.buf = g.buf[n:]
	if len(g.buf) == 0 && g.state != gateRefused {
		g.buf = g.mem[:0]
	}
}

// refuse gives net/http the stand-in request (which the handler answers
// with status) and nothing after it.
func (g *gate) refuse(status int) {
	g.refused.Store(int32(status))
	g.buf = standIn
	g.avail = len(standIn)
	g.state = gateRefused
}
