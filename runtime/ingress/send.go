package ingress

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// The send timeout (Limits.SendTimeout, nginx's send_timeout): a client
// that stops reading while a response is written to it would hold the
// writer, and with it the backend connection the response comes from,
// for as long as it stays connected. A write that makes no progress for
// the send timeout fails instead, which ends the client's connection (over
// HTTP/2 the whole connection, whose writer every stream shares); the
// response's backend connection is closed with it, its rest unread, never
// pooled. The event loops keep the same timeout for their own writes
// (loop.go, sendDeadline).

// sendConn is a client connection (under TLS, the TCP connection beneath
// it) whose writes have the send timeout. The write deadline is moved on
// when a write starts with less than the timeout left of it, to the
// timeout and a slack ahead: a connection that writes often sets it once
// per slack, not per write. A write that made progress before the
// deadline goes on with a new one, so only a whole window without a byte
// taken fails it. A deadline the caller sets (a TLS handshake, a last
// GOAWAY) governs until it is cleared.
type sendConn struct {
	net.Conn
	timeout, slack time.Duration
	// until is the write deadline set, in Unix nanoseconds: 0 none yet,
	// callerDeadline the caller's own.
	until atomic.Int64
}

const callerDeadline = -1

// withSendTimeout gives c's writes the send timeout.
func withSendTimeout(c net.Conn, timeout time.Duration) net.Conn {
	return &sendConn{Conn: c, timeout: timeout, slack: timeout / 8}
}

func (c *sendConn) Write(p []byte) (int, error) {
	written := 0
	for {
		c.arm()
		n, err := c.Conn.Write(p[written:])
		written += n
		if err == nil || n == 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			return written, err
		}
		// Bytes were taken before the deadline: the client reads, slowly,
		// and the rest gets a new deadline (unless it was the caller's).
		if until := c.until.Load(); until == callerDeadline || !c.until.CompareAndSwap(until, 0) {
			return written, err
		}
	}
}

// arm moves the write deadline on if less than the timeout is left of it.
func (c *sendConn) arm() {
	until := c.until.Load()
	if until == callerDeadline {
		return
	}
	now := time.Now()
	if until-now.UnixNano() >= int64(c.timeout) {
		return
	}
	d := now.Add(c.timeout + c.slack)
	if c.until.CompareAndSwap(until, d.UnixNano()) {
		c.Conn.SetWriteDeadline(d)
	}
}

func (c *sendConn) SetDeadline(t time.Time) error {
	c.callerSets(t)
	return c.Conn.SetDeadline(t)
}

func (c *sendConn) SetWriteDeadline(t time.Time) error {
	c.callerSets(t)
	return c.Conn.SetWriteDeadline(t)
}

// callerSets records a deadline the caller sets: its own governs writes
// until it clears it.
func (c *sendConn) callerSets(t time.Time) {
	if t.IsZero() {
		c.until.Store(0)
	} else {
		c.until.Store(callerDeadline)
	}
}

// CloseWrite shuts the write side of a TCP connection (lingering, the end
// of an upgraded connection).
func (c *sendConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
