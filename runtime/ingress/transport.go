package ingress

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slipwayhq/slipway/runtime/ingress/internal/h1"
)

// The backend side of net/http's requests (handler.go). A request goes out
// from the handler's own goroutine on a pooled connection (or a new one):
// the head and a body held in memory are written, and the response head is
// read, without http.Transport's writer and reader goroutines, whose
// hand-offs cost more CPU than the proxying on a busy gateway. Only a
// body streamed from the client is written by a goroutine of its own, so
// that a backend answering before it read the whole body is heard.
// Which requests go again after a failure is failure.next's decision, the
// same as the event loops'.

// outgoing is a request on its way to a task.
type outgoing struct {
	ctx context.Context
	// req is the client's request, for inFlight.response (which reads
	// its method); nil on the raw HTTP/1 side.
	req *http.Request
	// head is the request line and fields for the backend, through the
	// empty line.
	head []byte
	// body is a whole body, sent with the head; stream is a body read
	// from the client while it is sent, chunked when its length is not
	// known.
	body    []byte
	stream  *clientBody
	chunked bool

	idempotent bool
	timeouts   Timeouts
	// informational receives each 1xx response but 100 and 101 (103
	// Early Hints), before the final one.
	informational func(*http.Response)
}

// clientBody is a request body read from the client as the backend takes
// it: it is cut off after the body idle timeout without a byte (the read
// fails with a timeout) and beyond the body limit (http.MaxBytesReader).
type clientBody struct {
	r io.Reader
	// rc sets the client connection's read deadline: an
	// http.ResponseController, or the connection itself.
	rc   interface{ SetReadDeadline(time.Time) error }
	idle time.Duration
	// n counts the bytes read, eof says whether the body was read to its
	// end; err is the first read error but EOF that was the client's
	// doing (abort's are not).
	n   int64
	eof bool
	err error
}

func (b *clientBody) Read(p []byte) (int, error) {
	deadline := time.Now().Add(b.idle)
	b.rc.SetReadDeadline(deadline)
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		b.eof = true
		// The connection's next reads (net/http's wait for the next
		// request, or for the client leaving) have their own deadlines.
		b.rc.SetReadDeadline(time.Time{})
	case err != nil && b.err == nil && (!isTimeout(err) || !time.Now().Before(deadline)):
		// A timeout before the idle deadline is abort's.
		b.err = err
	}
	return n, err
}

// abort makes a read in progress return at once, with an error that is
// not the client's.
func (b *clientBody) abort() { b.rc.SetReadDeadline(aLongTimeAgo) }

// aLongTimeAgo is a deadline that makes blocked reads and writes return.
var aLongTimeAgo = time.Unix(1, 0)

// deadlines sets a backend connection's deadlines for the goroutines
// that share it; once aborted (the client left, the client's body
// failed), no later deadline revives it.
type deadlines struct {
	mu       sync.Mutex
	conn     net.Conn
	aborted  bool
	headRead bool
}

func (d *deadlines) abort() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.aborted = true
	d.conn.SetDeadline(aLongTimeAgo)
}

// bodySent starts the response header timeout once a streamed body is
// sent, unless the response head came first.
func (d *deadlines) bodySent(timeout time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.aborted && !d.headRead {
		d.conn.SetReadDeadline(time.Now().Add(timeout))
	}
}

// gotHead lifts the deadlines once the response head is in: a body takes
// as long as it takes.
func (d *deadlines) gotHead() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.headRead = true
	if !d.aborted {
		d.conn.SetDeadline(time.Time{})
	}
}

// roundTrip sends o to one of u's tasks, and again to others (or on a
// fresh connection) after failures as failure.next allows, until the first
// byte of an answer arrives: the caller reads the answer from the
// exchange it returns (response, or the head raw) and ends it (release).
func (u *upstream) roundTrip(o *outgoing) (*inFlight, error) {
	select {
	case <-u.resolved:
	case <-o.ctx.Done():
		return nil, o.ctx.Err()
	}
	var triedBuf [maxAttempts]*endpoint
	tried := triedBuf[:0]
	stale := 0
	for {
		e := u.pick(tried)
		if e == nil {
			u.refresh()
			return nil, errNoBackend
		}
		fl, f := u.attempt(o, e, stale < maxStaleRetries)
		if f.err == nil {
			return fl, nil
		}
		if f.dialFailed {
			e.markDown()
			u.refresh()
		}
		if o.ctx.Err() != nil {
			return nil, f.err
		}
		switch f.next() {
		case retryFresh:
			stale++
			continue
		case retryOther:
			if tried = append(tried, e); len(tried) < maxAttempts {
				continue
			}
		}
		return nil, f.err
	}
}

// attempt sends o on a connection to e: a pooled one, or a new one.
func (u *upstream) attempt(o *outgoing, e *endpoint, staleLeft bool) (*inFlight, failure) {
	f := failure{idempotent: o.idempotent}
	bc := e.idle.get()
	reused := bc != nil
	if bc == nil {
		c, err := u.dialer.DialContext(o.ctx, "tcp", e.addr)
		if err != nil {
			f.err, f.dialFailed = err, true
			return nil, f
		}
		u.connected()
		bc = newBackendConn(c)
	}
	fl, err := bc.send(o, e)
	if err == nil {
		return fl, f
	}
	bc.conn.Close()
	f.err = err
	// A body the client began to send (or failed to) cannot go again.
	f.bodyTaken = o.stream != nil && (o.stream.n > 0 || o.stream.err != nil)
	f.stale = reused && staleLeft
	return nil, f
}

// inFlight is a request sent on a backend connection, whose answer has
// begun to arrive.
type inFlight struct {
	bc     *backendConn
	e      *endpoint
	ctx    context.Context // the client's
	d      deadlines
	stop   func() bool // of the watch on ctx
	w      *bodyWriter // nil without a streamed body
	stream *clientBody
}

// send writes o on bc and waits for the first byte of an answer, which
// tells a connection the backend had closed (nothing comes back at all)
// from a broken answer.
func (bc *backendConn) send(o *outgoing, e *endpoint) (*inFlight, error) {
	fl := &inFlight{bc: bc, e: e, ctx: o.ctx, d: deadlines{conn: bc.conn}, stream: o.stream}
	headerTimeout := o.timeouts.responseHeader()
	if o.stream == nil {
		bc.conn.SetDeadline(time.Now().Add(headerTimeout))
	} else {
		bc.conn.SetDeadline(time.Time{})
	}
	// A client that goes away unblocks whatever bc waits for.
	fl.stop = context.AfterFunc(o.ctx, fl.d.abort)
	if o.stream == nil {
		bc.bw.Write(o.head)
		bc.bw.Write(o.body)
		if err := bc.bw.Flush(); err != nil {
			return nil, fl.fail(err)
		}
	} else {
		fl.w = startBodyWriter(o, bc, &fl.d, headerTimeout)
	}
	if _, err := bc.br.Peek(1); err != nil {
		return nil, fl.fail(err)
	}
	return fl, nil
}

// fail ends an exchange that failed with err (the connection is closed by
// the caller) and returns the error to report: the client's, when its
// body failed (too large, too slow, cut off), rather than the backend's
// silence that followed.
func (fl *inFlight) fail(err error) error {
	fl.stop()
	if w := fl.w; w != nil {
		fl.d.abort()
		fl.stream.abort()
		<-w.done
		if w.clientErr != nil {
			err = &clientBodyError{w.clientErr}
		}
	}
	return err
}

// gotHead lifts the response header timeout once the head is in: a body
// takes as long as it takes.
func (fl *inFlight) gotHead() { fl.d.gotHead() }

// release ends the exchange: the connection goes back to the pool when
// reusable (the response read to its end, nothing left over, the body
// sent whole), and is closed otherwise.
func (fl *inFlight) release(reusable bool) {
	// stop reports false when the client already went away and the
	// deadline was (or is being) set: the connection is no use then.
	reuse := fl.stop() && reusable && fl.bc.br.Buffered() == 0 && !fl.e.closed.Load()
	if fl.w != nil && !fl.w.finished(fl.stream, fl.bc.conn) {
		reuse = false
	}
	if reuse {
		fl.e.idle.put(fl.bc)
		return
	}
	fl.bc.conn.Close()
}

// responseHeads are the parsed heads writeFramed reuses.
var responseHeads = sync.Pool{New: func() any { return new(h1.Response) }}

// writeFramed passes an answer whose body has a length (or that has none)
// on to w as it comes, parsed by the strict parser rather than read into a
// net/http response; informational answers go first (100 is dropped, 103
// passes). It reports whether it wrote the answer; when not, nothing but
// informational answers was consumed, and response reads the rest (a
// chunked body, one that ends with the connection, an upgrade, a head the
// parser refused). A body that breaks off aborts the client's response.
func (fl *inFlight) writeFramed(w http.ResponseWriter, o *outgoing, buf *[]byte) (int, bool) {
	rs := responseHeads.Get().(*h1.Response)
	defer responseHeads.Put(rs)
	br := fl.bc.br
	for {
		if _, err := readResponseHead(br, rs); err != nil {
			return 0, false
		}
		if rs.Status >= 200 {
			break
		}
		if rs.Status == http.StatusSwitchingProtocols {
			return 0, false
		}
		if rs.Status != http.StatusContinue {
			copyResponseFields(w.Header(), rs)
			w.WriteHeader(rs.Status)
			clear(w.Header())
		}
		br.Discard(rs.HeadLen)
	}
	noBody := o.req.Method == http.MethodHead || rs.Status == http.StatusNoContent || rs.Status == http.StatusNotModified
	if !noBody && (rs.TransferEncoding || rs.ContentLength < 0) {
		return 0, false
	}
	copyResponseFields(w.Header(), rs)
	status, remaining, reusable := rs.Status, max(rs.ContentLength, 0), !rs.Close
	if noBody {
		remaining = 0
	}
	br.Discard(rs.HeadLen)
	fl.gotHead()
	w.WriteHeader(status)
	for remaining > 0 {
		n, err := br.Read((*buf)[:min(int64(len(*buf)), remaining)])
		remaining -= int64(n)
		if _, werr := w.Write((*buf)[:n]); werr != nil {
			// The client went away: the connection closes with the rest
			// of the body in it.
			fl.release(false)
			return status, true
		}
		if err != nil && remaining > 0 {
			fl.release(false)
			panic(http.ErrAbortHandler)
		}
	}
	fl.release(reusable)
	return status, true
}

// copyResponseFields copies a backend's response fields for the client:
// all but the hop-by-hop ones and those its Connection field names. The
// values share one string and one slice, and common names are not
// allocated at all: a response's fields cost a few allocations, not three
// each.
func copyResponseFields(h http.Header, rs *h1.Response) {
	size, n := 0, 0
	for _, f := range rs.Fields {
		size += len(f.Value)
		n++
	}
	var sb strings.Builder
	sb.Grow(size)
	for _, f := range rs.Fields {
		sb.Write(f.Value)
	}
	text, vals := sb.String(), make([]string, n)
	at := 0
	for i, f := range rs.Fields {
		v := text[at : at+len(f.Value)]
		at += len(f.Value)
		if isHopField(f.Name) || rs.Options && namedByConnection(rs.Fields, f.Name) {
			continue
		}
		key := canonicalName(f.Name)
		if prior, ok := h[key]; ok {
			h[key] = append(prior, v)
			continue
		}
		vals[i] = v
		h[key] = vals[i : i+1 : i+1]
	}
}

// commonNames are the response fields most backends send, in lower case
// and in net/http's canonical form, which canonicalName returns without
// allocating.
var commonNames = func() [][2]string {
	var names [][2]string
	for _, n := range []string{"accept-ranges", "access-control-allow-origin", "age", "cache-control",
		"content-encoding", "content-language", "content-length", "content-security-policy",
		"content-type", "date", "etag", "expires", "last-modified", "link", "location",
		"referrer-policy", "server", "set-cookie", "strict-transport-security", "vary",
		"x-content-type-options", "x-frame-options", "x-powered-by", "x-request-id"} {
		names = append(names, [2]string{n, http.CanonicalHeaderKey(n)})
	}
	return names
}()

// canonicalName is http.CanonicalHeaderKey of a field name.
func canonicalName(name []byte) string {
	for _, n := range commonNames {
		if foldEqual(name, n[0]) {
			return n[1]
		}
	}
	return http.CanonicalHeaderKey(string(name))
}

// response reads the answer as a net/http response (for the HTTP/2
// side): 1xx answers but 100 go to o.informational, and the body gives
// the connection back when read to its end. On error the exchange is
// over and the connection closed.
func (fl *inFlight) response(o *outgoing) (*http.Response, error) {
	var resp *http.Response
	for {
		var err error
		if resp, err = http.ReadResponse(fl.bc.br, o.req); err != nil {
			fl.bc.conn.Close()
			return nil, fl.fail(err)
		}
		if resp.StatusCode >= 200 {
			break
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			fl.bc.conn.Close()
			return nil, fl.fail(errUnaskedUpgrade)
		}
		if resp.StatusCode != http.StatusContinue && o.informational != nil {
			o.informational(resp)
		}
	}
	fl.gotHead()
	b := &backendBody{rc: resp.Body, fl: fl, reusable: !resp.Close}
	if resp.Body == http.NoBody {
		b.release(true)
	} else {
		resp.Body = b
	}
	return resp, nil
}

// clientBodyError is a request that failed because its body did.
type clientBodyError struct{ err error }

func (e *clientBodyError) Error() string { return "reading the request body: " + e.err.Error() }
func (e *clientBodyError) Unwrap() error { return e.err }

// bodyWriter writes the head and a streamed body to a backend.
type bodyWriter struct {
	done chan struct{}
	// clientErr: reading the client's body failed; backendErr: writing to
	// the backend did (it may have answered early, which is then read).
	clientErr, backendErr error
}

func startBodyWriter(o *outgoing, bc *backendConn, d *deadlines, headerTimeout time.Duration) *bodyWriter {
	w := &bodyWriter{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		bc.bw.Write(o.head)
		err := copyBody(bc.bw, o.stream, o.chunked)
		if err == nil {
			err = bc.bw.Flush()
		}
		switch {
		case o.stream.err != nil:
			w.clientErr = o.stream.err
			d.abort()
		case err != nil:
			w.backendErr = err
		default:
			d.bodySent(headerTimeout)
		}
	}()
	return w
}

// finished says whether the body went out whole; a writer still at work
// is stopped (and waited for) first.
func (w *bodyWriter) finished(stream *clientBody, conn net.Conn) bool {
	select {
	case <-w.done:
		return w.clientErr == nil && w.backendErr == nil
	default:
	}
	// The response ended before the body was sent: stop the writer
	// (wherever it blocks) before the handler returns, since net/http
	// owns the request body after that.
	conn.SetDeadline(aLongTimeAgo)
	stream.abort()
	<-w.done
	return false
}

// copyBody copies a streamed body to the backend, in chunks when chunked.
func copyBody(bw *bufio.Writer, body io.Reader, chunked bool) error {
	buf := getBuffer()
	defer putBuffer(buf)
	for {
		n, rerr := body.Read(*buf)
		if n > 0 {
			if chunked {
				var size [20]byte
				bw.Write(strconv.AppendInt(size[:0], int64(n), 16))
				bw.WriteString("\r\n")
			}
			bw.Write((*buf)[:n])
			if chunked {
				bw.WriteString("\r\n")
			}
			// What the client sent goes on at once (a streamed upload
			// the backend reads as it comes).
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			if chunked {
				bw.WriteString("0\r\n\r\n")
			}
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// backendBody is a response body on a backend connection: read to its
// end, the connection goes back to the pool; closed before, it is closed
// (never pooled with bytes left in it).
type backendBody struct {
	rc       io.ReadCloser
	fl       *inFlight
	reusable bool
	done     bool
}

func (b *backendBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.release(true)
	} else if err != nil {
		b.release(false)
		if b.fl.ctx.Err() != nil {
			// The client went away (which set the deadline): say so
			// rather than "i/o timeout".
			err = b.fl.ctx.Err()
		}
	}
	return n, err
}

// Close never drains the body (a stream has no end).
func (b *backendBody) Close() error {
	if !b.done {
		b.release(false)
	}
	return nil
}

func (b *backendBody) release(atEOF bool) {
	b.done = true
	b.fl.release(atEOF && b.reusable)
}

var buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func getBuffer() *[]byte  { return buffers.Get().(*[]byte) }
func putBuffer(b *[]byte) { buffers.Put(b) }
