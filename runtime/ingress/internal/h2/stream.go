package h2

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"github.com/slipwayhq/slipway/runtime/ingress/internal/h1"
)

// stream is one request and its response.
type stream struct {
	c       *conn
	id      uint32
	handler http.Handler
	ctx     context.Context
	cancel  context.CancelFunc

	// The request, as readRequest took it.
	method, path, authority string
	header                  http.Header
	expectContinue          bool
	noBody                  bool

	// gone: the stream was reset (by either side) or its connection
	// closed; nothing more is written for it. Set under mu, read by
	// writers under wmu.
	gone atomic.Bool
	// sentFinal: the final response head was written (no 1xx after it).
	sentFinal atomic.Bool

	// Under c.mu.
	declared, received     int64 // Content-Length (-1: none), DATA so far
	recvWindow, sendWindow int64
	unacked                int64 // body bytes read and not given back
	body                   bytes.Buffer
	bodyErr                error // io.EOF once the request is whole
	deadline               time.Time
	remoteDone, localDone  bool
	reset, answered        bool
	notify                 chan struct{}
}

// signal wakes a body reader.
func (st *stream) signal() {
	select {
	case st.notify <- struct{}{}:
	default:
	}
}

// errMalformed is a request RFC 9113 8.2-8.3 calls malformed, or one
// the gateway could not pass on as HTTP/1.1 unchanged.
var errMalformed = errors.New("http2: malformed request")

// readRequest takes the request's pseudo-header and header fields (the
// Framer refused pseudo-fields after regular ones, unknown or repeated
// ones, upper-case or non-token names and values with CR, LF or NUL).
func (st *stream) readRequest(f *http2.MetaHeadersFrame) error {
	var scheme string
	for _, hf := range f.PseudoFields() {
		switch hf.Name {
		case ":method":
			st.method = hf.Value
		case ":scheme":
			scheme = hf.Value
		case ":path":
			st.path = hf.Value
		case ":authority":
			st.authority = hf.Value
		default:
			// :protocol (extended CONNECT), which is not offered.
			return errMalformed
		}
	}
	switch {
	case st.method == "" || !h1.IsToken([]byte(st.method)):
		return errMalformed
	case st.method == http.MethodConnect:
		if scheme != "" || st.path != "" || st.authority == "" {
			return errMalformed
		}
		// No tunnels: answered 405 below.
		st.handler = connectRefused
	case scheme == "" || st.path == "":
		return errMalformed
	case st.path == "*":
		if st.method != http.MethodOptions {
			return errMalformed
		}
	case !h1.ValidPath([]byte(st.path)):
		return errMalformed
	}
	fields := f.RegularFields()
	vals := make([]string, len(fields))
	st.header = make(http.Header, len(fields))
	var host string
	var cookies []string
	for i, hf := range fields {
		v := hf.Value
		if v != "" && (v[0] == ' ' || v[0] == '\t' || v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
			return errMalformed
		}
		switch hf.Name {
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			return errMalformed
		case "te":
			if !strings.EqualFold(v, "trailers") {
				return errMalformed
			}
		case "host":
			if host != "" && host != v {
				return errMalformed
			}
			host = v
			continue
		case "content-length":
			n, ok := parseLength(v)
			if !ok || st.declared >= 0 && st.declared != n {
				return errMalformed
			}
			st.declared = n
		case "cookie":
			cookies = append(cookies, v)
			continue
		case "expect":
			st.expectContinue = strings.EqualFold(v, "100-continue")
		}
		key := canonicalName(hf.Name)
		vals[i] = v
		if prior, ok := st.header[key]; ok {
			st.header[key] = append(prior, v)
		} else {
			st.header[key] = vals[i : i+1 : i+1]
		}
	}
	switch {
	case st.authority == "":
		st.authority = host
	case host != "" && host != st.authority:
		return errMalformed
	}
	if !h1.ValidHost([]byte(st.authority)) {
		return errMalformed
	}
	if len(cookies) > 0 {
		// RFC 9113 8.2.3: one field for HTTP/1.1.
		st.header["Cookie"] = []string{strings.Join(cookies, "; ")}
	}
	if f.StreamEnded() {
		st.noBody = true
		if st.declared > 0 {
			return errMalformed
		}
	}
	return nil
}

// parseLength parses a Content-Length: digits only.
func parseLength(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

// connectRefused answers CONNECT: the gateway makes no tunnels.
var connectRefused = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusMethodNotAllowed)
	io.WriteString(w, "405 Method Not Allowed\n")
})

// request makes the handler's http.Request.
func (st *stream) request() *http.Request {
	body, length := io.ReadCloser(http.NoBody), int64(0)
	if !st.noBody {
		body, length = requestBody{st}, st.declared
	}
	path, query, _ := strings.Cut(st.path, "?")
	r := &http.Request{
		Method: st.method, URL: &url.URL{Path: path, RawQuery: query}, Proto: "HTTP/2.0", ProtoMajor: 2,
		Header: st.header, Body: body, ContentLength: length, Host: st.authority,
		RemoteAddr: st.c.peer, RequestURI: st.path,
	}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	return r.WithContext(st.ctx)
}

// requestBody is a stream's request body, as the client sends it.
type requestBody struct{ st *stream }

func (b requestBody) Close() error { return nil }

func (b requestBody) Read(p []byte) (int, error) {
	st, c := b.st, b.st.c
	if st.expectContinue {
		// The client waits for a go-ahead before it sends the body.
		st.expectContinue = false
		c.writeInformational(st, http.StatusContinue, nil)
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	c.mu.Lock()
	for {
		if st.body.Len() > 0 && len(p) > 0 {
			n, _ := st.body.Read(p)
			st.unacked += int64(n)
			c.unackedConn += int64(n)
			c.mu.Unlock()
			c.giveBack(st)
			return n, nil
		}
		if err := st.bodyErr; err != nil {
			c.mu.Unlock()
			return 0, err
		}
		deadline := st.deadline
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			c.mu.Unlock()
			return 0, os.ErrDeadlineExceeded
		}
		c.mu.Unlock()
		if deadline.IsZero() {
			<-st.notify
		} else {
			if timer == nil {
				timer = time.NewTimer(time.Until(deadline))
			} else {
				timer.Reset(time.Until(deadline))
			}
			select {
			case <-st.notify:
			case <-timer.C:
			}
		}
		c.mu.Lock()
	}
}

// setReadDeadline bounds the wait of the body's reads (and wakes one
// waiting).
func (st *stream) setReadDeadline(t time.Time) {
	st.c.mu.Lock()
	st.deadline = t
	st.c.mu.Unlock()
	st.signal()
}

// giveBack sends WINDOW_UPDATEs for body bytes read (or dropped), once a
// quarter of a window has gathered.
func (c *conn) giveBack(st *stream) {
	threshold := int64(c.srv.Window) / 4
	var connInc, streamInc int64
	c.mu.Lock()
	if c.unackedConn >= threshold {
		connInc = c.unackedConn
		c.recvConn += connInc
		c.unackedConn = 0
	}
	if st != nil && !st.remoteDone && !st.reset && st.unacked >= threshold {
		streamInc = st.unacked
		st.recvWindow += streamInc
		st.unacked = 0
	}
	c.mu.Unlock()
	if connInc > 0 {
		c.queueControl(control{kind: ctrlWindow, val: uint32(connInc)})
	}
	if streamInc > 0 {
		c.queueControl(control{kind: ctrlWindow, id: st.id, val: uint32(streamInc)})
	}
}

// resetStream ends st with RST_STREAM code (none after the connection
// closed): its handler's context is cancelled, its body fails with err,
// and nothing more is written for it.
func (c *conn) resetStream(st *stream, code http2.ErrCode, err error) {
	if !c.endStream(st, err) {
		return
	}
	if err != errConnClosed {
		c.queueControl(control{kind: ctrlReset, id: st.id, val: uint32(code)})
	}
}

// dropStream ends st after the client reset it.
func (c *conn) dropStream(st *stream, err error) { c.endStream(st, err) }

// endStream marks st reset; false when it already was.
func (c *conn) endStream(st *stream, err error) bool {
	c.mu.Lock()
	if st.reset {
		c.mu.Unlock()
		return false
	}
	st.reset = true
	st.gone.Store(true)
	st.bodyErr = err
	c.closeStream(st)
	c.mu.Unlock()
	if st.cancel != nil {
		st.cancel()
	}
	st.signal()
	c.cond.Broadcast()
	c.giveBack(nil)
	return true
}

// closeStream forgets st, whose bytes not read go back to the
// connection's window; under mu. A connection left without streams has
// its idle timeout, or ends when it is going away.
func (c *conn) closeStream(st *stream) {
	if c.streams[st.id] != st {
		return
	}
	delete(c.streams, st.id)
	c.unackedConn += int64(st.body.Len())
	st.body = bytes.Buffer{}
	if len(c.streams) > 0 || c.dead {
		return
	}
	if (c.sentGoAway || c.peerGoAway) && c.running == 0 {
		c.nc.SetReadDeadline(time.Unix(1, 0))
	} else {
		c.nc.SetReadDeadline(time.Now().Add(c.srv.IdleTimeout))
	}
}
