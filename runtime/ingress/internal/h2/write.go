package h2

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Writing. Every frame is written into the connection's buffered writer
// under wmu by the goroutine that has it to say: a handler its response,
// the read loop (or a body reader) its control frames. The read loop never
// waits for wmu: what it cannot write at once (another goroutine holds
// wmu) is queued, and whoever holds wmu next writes it. A holder flushes
// when it releases wmu unless another goroutine waits for it, which then
// flushes in its place: responses finished together go out in one write.

// control is a control frame to write.
type control struct {
	kind uint8
	id   uint32
	val  uint32
	data [8]byte
}

const (
	ctrlSettingsAck = iota + 1
	ctrlPing
	ctrlReset
	ctrlWindow
	ctrlTableSize
)

// queueControl queues a control frame and writes it if wmu is free. Too
// many waiting (a client that sends PINGs or SETTINGS and reads nothing)
// ends the connection.
func (c *conn) queueControl(ctl control) error {
	c.cmu.Lock()
	if len(c.ctrl) >= maxQueuedControl {
		c.cmu.Unlock()
		c.nc.Close()
		return http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
	}
	c.ctrl = append(c.ctrl, ctl)
	c.ctrlPending.Store(true)
	c.cmu.Unlock()
	c.writeQueued()
	return nil
}

// writeQueued writes the queued control frames if nobody holds wmu (who
// does writes them before it releases it).
func (c *conn) writeQueued() {
	for c.ctrlPending.Load() && c.wmu.TryLock() {
		c.writeControl()
		c.release(true)
	}
}

// writeControl writes the queued control frames; under wmu.
func (c *conn) writeControl() {
	if !c.ctrlPending.Load() {
		return
	}
	c.cmu.Lock()
	queued := c.ctrl
	c.ctrl = c.spare[:0]
	c.ctrlPending.Store(false)
	c.cmu.Unlock()
	for _, ctl := range queued {
		switch ctl.kind {
		case ctrlSettingsAck:
			c.fr.WriteSettingsAck()
		case ctrlPing:
			c.fr.WritePing(true, ctl.data)
		case ctrlReset:
			c.fr.WriteRSTStream(ctl.id, http2.ErrCode(ctl.val))
		case ctrlWindow:
			c.fr.WriteWindowUpdate(ctl.id, ctl.val)
		case ctrlTableSize:
			c.enc.SetMaxDynamicTableSizeLimit(ctl.val)
		}
	}
	c.dirty = c.dirty || len(queued) > 0
	c.spare = queued[:0]
}

// lockWrite takes wmu (and writes what is queued).
func (c *conn) lockWrite() {
	c.waiting.Add(1)
	c.wmu.Lock()
	c.waiting.Add(-1)
	c.writeControl()
}

// unlockWrite releases wmu, flushing when asked (or left to), and writes
// what was queued meanwhile.
func (c *conn) unlockWrite(flush bool) {
	c.release(flush)
	c.writeQueued()
}

func (c *conn) release(flush bool) {
	if flush || c.dirty {
		if c.waiting.Load() == 0 {
			c.dirty = false
			if err := c.bw.Flush(); err != nil {
				// The client is gone: every stream ends.
				c.nc.Close()
				go c.kill()
			}
		} else {
			c.dirty = true
		}
	}
	c.wmu.Unlock()
}

// flushNow flushes what is buffered (before waiting for a window).
func (c *conn) flushNow() {
	c.lockWrite()
	c.unlockWrite(true)
}

// writeHeaderBlock writes a header block as HEADERS and CONTINUATION
// frames the client takes; under wmu.
func (c *conn) writeHeaderBlock(id uint32, block []byte, end bool) {
	size := int(c.peerMaxFrame.Load())
	first := block[:min(len(block), size)]
	rest := block[len(first):]
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndStream: end, EndHeaders: len(rest) == 0})
	for len(rest) > 0 {
		frag := rest[:min(len(rest), size)]
		rest = rest[len(frag):]
		c.fr.WriteContinuation(id, len(rest) == 0, frag)
	}
}

// encodeHeaders codes a response head (status > 0) or trailers (only the
// fields named by trailers, and those with http.TrailerPrefix); under wmu.
// Connection-specific fields and fields HTTP/2 cannot carry are left out.
func (c *conn) encodeHeaders(status int, h http.Header, trailers []string, isTrailers bool) []byte {
	c.encBuf.Reset()
	if status > 0 {
		c.enc.WriteField(hpack.HeaderField{Name: ":status", Value: statusCode(status)})
	}
	for name, values := range h {
		if prefixed := strings.HasPrefix(name, http.TrailerPrefix); isTrailers {
			if prefixed {
				name = name[len(http.TrailerPrefix):]
			} else if !contains(trailers, name) {
				continue
			}
		} else if prefixed || contains(trailers, name) {
			continue
		}
		lower := lowerName(name)
		if isConnectionSpecific(lower) || !httpguts.ValidHeaderFieldName(name) {
			continue
		}
		for _, v := range values {
			if httpguts.ValidHeaderFieldValue(v) {
				c.enc.WriteField(hpack.HeaderField{Name: lower, Value: v})
			}
		}
	}
	if status > 0 && h["Date"] == nil {
		c.enc.WriteField(hpack.HeaderField{Name: "date", Value: httpDate()})
	}
	return c.encBuf.Bytes()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// isConnectionSpecific says whether a field never appears in HTTP/2
// (RFC 9113 8.2.2).
func isConnectionSpecific(lower string) bool {
	switch lower {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer":
		return true
	}
	return false
}

func statusCode(status int) string {
	switch status {
	case 200:
		return "200"
	case 404:
		return "404"
	}
	return strconv.Itoa(status)
}

// httpDate is the Date field, formatted once a second.
func httpDate() string {
	now := time.Now().Unix()
	if d := cachedDate.Load(); d != nil && d.at == now {
		return d.text
	}
	d := &dateText{at: now, text: time.Unix(now, 0).UTC().Format(http.TimeFormat)}
	cachedDate.Store(d)
	return d.text
}

type dateText struct {
	at   int64
	text string
}

var cachedDate atomic.Pointer[dateText]

// writeInformational writes a 1xx response head at once.
func (c *conn) writeInformational(st *stream, status int, h http.Header) {
	c.lockWrite()
	if !st.gone.Load() && !st.sentFinal.Load() {
		c.writeHeaderBlock(st.id, c.encodeHeaders(status, h, nil, false), false)
	}
	c.unlockWrite(true)
}

// reserve waits until st may send DATA and returns how much of want it
// may send now; the windows are taken.
func (c *conn) reserve(st *stream, want int) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	flushed := false
	for {
		if st.reset || c.dead {
			return 0, errStreamGone
		}
		n := min(int64(want), st.sendWindow, c.sendConn, int64(c.peerMaxFrame.Load()))
		if n > 0 {
			st.sendWindow -= n
			c.sendConn -= n
			return int(n), nil
		}
		if !flushed {
			// The client gets what is written before it is waited for.
			c.mu.Unlock()
			c.flushNow()
			c.mu.Lock()
			flushed = true
			continue
		}
		c.cond.Wait()
	}
}

// unreserve gives back the connection's window taken for DATA that was
// not sent.
func (c *conn) unreserve(n int) {
	c.mu.Lock()
	c.sendConn += int64(n)
	c.mu.Unlock()
	c.cond.Broadcast()
}

var errStreamGone = errors.New("http2: stream closed")

// responseWriter is a stream's http.ResponseWriter. The body is gathered
// in buf (one frame's worth) and sent with the head when the handler
// returns, or as buf fills, or when flushed.
type responseWriter struct {
	st          *stream
	header      http.Header
	status      int
	wroteHeader bool
	sentHeader  bool
	ended       bool
	bodyless    bool
	failed      bool
	clen        int64 // the Content-Length the handler set, -1 for none
	written     int64
	trailers    []string
	buf         *[]byte
}

const responseBufferSize = 16 << 10

var responseBuffers = sync.Pool{New: func() any { b := make([]byte, 0, responseBufferSize); return &b }}

func (rw *responseWriter) Header() http.Header {
	if rw.header == nil {
		rw.header = http.Header{}
	}
	return rw.header
}

func (rw *responseWriter) WriteHeader(status int) {
	if rw.wroteHeader || rw.failed {
		return
	}
	if status < 200 {
		if status != http.StatusSwitchingProtocols {
			rw.st.c.writeInformational(rw.st, status, rw.header)
		}
		return
	}
	rw.wroteHeader, rw.status = true, status
	rw.bodyless = rw.st.method == http.MethodHead || status == http.StatusNoContent || status == http.StatusNotModified
	if v := rw.header["Content-Length"]; len(v) == 1 {
		if n, ok := parseLength(v[0]); ok {
			rw.clen = n
		}
	}
	for _, v := range rw.header["Trailer"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				rw.trailers = append(rw.trailers, http.CanonicalHeaderKey(name))
			}
		}
	}
}

func (rw *responseWriter) Write(p []byte) (int, error) {
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
	}
	switch {
	case rw.failed:
		return 0, errStreamGone
	case rw.bodyless:
		return len(p), nil
	}
	if rw.clen >= 0 && rw.written+int64(len(p)) > rw.clen {
		// More than its Content-Length: a malformed response.
		return 0, http.ErrContentLength
	}
	rw.written += int64(len(p))
	if rw.buf == nil {
		rw.buf = responseBuffers.Get().(*[]byte)
	}
	b := *rw.buf
	if len(b)+len(p) <= cap(b) {
		*rw.buf = append(b, p...)
		return len(p), nil
	}
	if err := rw.send(b, false, false); err != nil {
		return 0, err
	}
	*rw.buf = b[:0]
	if len(p) >= cap(b) {
		if err := rw.send(p, false, false); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	*rw.buf = append(b[:0], p...)
	return len(p), nil
}

// Flush sends what was written so far.
func (rw *responseWriter) Flush() { rw.FlushError() }

func (rw *responseWriter) FlushError() error {
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
	}
	if rw.failed {
		return errStreamGone
	}
	var b []byte
	if rw.buf != nil {
		b = *rw.buf
		*rw.buf = b[:0]
	}
	return rw.send(b, false, true)
}

// SetReadDeadline bounds the wait for the request body (the handler's
// body idle timeout, through http.ResponseController).
func (rw *responseWriter) SetReadDeadline(t time.Time) error {
	rw.st.setReadDeadline(t)
	return nil
}

// finish ends the response when the handler returns: what is left is
// sent with END_STREAM, or the stream reset when the body fell short of
// its Content-Length (never a clean end for a truncated body).
func (rw *responseWriter) finish() {
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
	}
	st, c := rw.st, rw.st.c
	if rw.failed {
		return
	}
	if rw.clen >= 0 && !rw.bodyless && rw.written != rw.clen {
		c.resetStream(st, http2.ErrCodeInternal, errStreamReset)
		return
	}
	var b []byte
	if rw.buf != nil {
		b = *rw.buf
	}
	rw.send(b, true, true)
}

func (rw *responseWriter) release() {
	if rw.buf != nil {
		*rw.buf = (*rw.buf)[:0]
		responseBuffers.Put(rw.buf)
		rw.buf = nil
	}
}

// hasTrailers says whether trailers are to be sent.
func (rw *responseWriter) hasTrailers() bool {
	for name, v := range rw.header {
		if len(v) > 0 && (contains(rw.trailers, name) || strings.HasPrefix(name, http.TrailerPrefix)) {
			return true
		}
	}
	return false
}

// send writes data as DATA frames within the client's windows, the head
// first if not sent yet; end ends the stream (after the trailers, if
// any), and a stream whose request is not whole yet is then reset with
// NO_ERROR (the rest of its body is not wanted).
func (rw *responseWriter) send(data []byte, end, flush bool) error {
	st, c := rw.st, rw.st.c
	trailers := end && rw.hasTrailers()
	for {
		n := 0
		if len(data) > 0 {
			var err error
			if n, err = c.reserve(st, len(data)); err != nil {
				rw.failed = true
				return err
			}
		}
		chunk := data[:n]
		data = data[n:]
		last := end && len(data) == 0
		c.lockWrite()
		if st.gone.Load() {
			c.unlockWrite(false)
			c.unreserve(n)
			rw.failed = true
			return errStreamGone
		}
		if !rw.sentHeader {
			rw.sentHeader = true
			st.sentFinal.Store(true)
			endHere := last && n == 0 && !trailers
			c.writeHeaderBlock(st.id, c.encodeHeaders(rw.status, rw.header, rw.trailers, false), endHere)
			rw.ended = endHere
		}
		if n > 0 || last && !rw.ended && !trailers {
			c.fr.WriteData(st.id, last && !trailers, chunk)
			rw.ended = last && !trailers
		}
		if last && trailers {
			c.writeHeaderBlock(st.id, c.encodeHeaders(0, rw.header, rw.trailers, true), true)
			rw.ended = true
		}
		if last {
			c.answered(st)
		}
		c.unlockWrite(flush && len(data) == 0)
		if len(data) == 0 {
			return nil
		}
	}
}

// answered records that st's response was sent whole; under wmu, so that
// a RST_STREAM it needs follows the END_STREAM. A stream whose request
// is not whole yet is reset with NO_ERROR: the rest is not wanted.
func (c *conn) answered(st *stream) {
	c.mu.Lock()
	st.localDone, st.answered = true, true
	c.cancelled = max(0, c.cancelled-1)
	resetAfter := !st.remoteDone && !st.reset
	if resetAfter {
		st.reset = true
		st.gone.Store(true)
		st.bodyErr = errStreamReset
	}
	c.closeStream(st)
	c.mu.Unlock()
	if resetAfter {
		c.fr.WriteRSTStream(st.id, http2.ErrCodeNo)
		st.signal()
		c.giveBack(nil)
	}
}
