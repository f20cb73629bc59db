package h2

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Server serves HTTP/2 connections with Handler. Set its fields before the
// first ServeConn.
type Server struct {
	Handler http.Handler
	Log     *slog.Logger
	// MaxStreams bounds a connection's concurrent streams (and its running
	// handlers); MaxReadFrameSize the frames a client may send;
	// MaxHeaderListSize a request's header list (as HPACK counts it).
	MaxStreams        uint32
	MaxReadFrameSize  uint32
	MaxHeaderListSize uint32
	// Window is the flow-control window the client gets for each stream
	// and for the connection: what the server buffers of request bodies.
	Window int32
	// PrefaceTimeout bounds the client's preface and first SETTINGS;
	// IdleTimeout closes a connection without streams.
	PrefaceTimeout time.Duration
	IdleTimeout    time.Duration

	mu       sync.Mutex
	conns    map[*conn]struct{}
	stopping bool
}

// Bounds on what a client may make the server do for nothing.
const (
	// maxQueuedControl bounds control frames (SETTINGS and PING
	// acknowledgements, resets, window updates) waiting to be written while
	// the client does not read: beyond, the connection ends.
	maxQueuedControl = 10000
	// maxCancelled bounds streams the client reset before their answer,
	// net of those answered: beyond, GOAWAY ENHANCE_YOUR_CALM.
	maxCancelled = 1000
	// maxEmptyFrames bounds frames that carry nothing (empty DATA,
	// PRIORITY, unknown types), net of requests: beyond, GOAWAY
	// ENHANCE_YOUR_CALM.
	maxEmptyFrames = 1000
	// queuedPerStream: handlers waiting to run (because handlers of reset
	// streams still run) may be this many times MaxStreams.
	queuedPerStream = 4
	// writeBufferSize is the connection's write buffer.
	writeBufferSize = 32 << 10
	// goAwayTimeout bounds writing the last GOAWAY to a client that may
	// not read.
	goAwayTimeout = 2 * time.Second
)

// ServeConn serves c, whose TLS handshake negotiated h2, until it ends;
// base is the context of its requests.
func (s *Server) ServeConn(nc net.Conn, base context.Context) {
	c := s.newConn(nc, base)
	if !s.track(c) {
		nc.Close()
		return
	}
	defer s.untrack(c)
	c.serve()
}

func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	if s.conns == nil {
		s.conns = map[*conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Shutdown sends every connection a GOAWAY: the streams it has go on, and
// it closes once they are over. New connections are closed at once.
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.stopping = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		// Not waited for: a connection whose client reads nothing holds
		// its writer until Close.
		go c.goAway(http2.ErrCodeNo, false)
	}
}

// Close closes every connection.
func (s *Server) Close() {
	s.mu.Lock()
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
}

// conn is one HTTP/2 connection.
type conn struct {
	srv  *Server
	nc   net.Conn
	base context.Context
	peer string
	br   *bufio.Reader
	fr   *http2.Framer // read by the read loop; written under wmu

	// Writing, under wmu: the buffered writer, the HPACK encoder. waiting
	// counts goroutines waiting for wmu; dirty says the buffer holds
	// frames that must be flushed (by the last holder).
	wmu     sync.Mutex
	bw      *bufio.Writer
	enc     *hpack.Encoder
	encBuf  bytes.Buffer
	waiting atomic.Int32
	dirty   bool
	// peerMaxFrame is the largest frame the client takes.
	peerMaxFrame atomic.Uint32

	// Control frames the read loop (or a body reader) could not write at
	// once, written by whoever holds wmu next.
	cmu         sync.Mutex
	ctrl, spare []control
	ctrlPending atomic.Bool

	// The connection's state, under mu; cond wakes writers waiting for a
	// flow-control window.
	mu          sync.Mutex
	cond        sync.Cond
	streams     map[uint32]*stream
	maxID       uint32
	goAwayID    uint32 // set once a GOAWAY was sent
	sentGoAway  bool
	peerGoAway  bool
	dead        bool
	sendConn    int64 // what the client's connection window allows
	peerInitial int64 // the client's initial stream window
	recvConn    int64 // what the client may still send on the connection
	unackedConn int64 // read from bodies, not yet given back
	running     int   // handler goroutines
	queued      []*stream
	cancelled   int
	empty       int
	handlers    sync.WaitGroup
}

func (s *Server) newConn(nc net.Conn, base context.Context) *conn {
	c := &conn{srv: s, nc: nc, base: base, peer: nc.RemoteAddr().String(), streams: map[uint32]*stream{}}
	c.cond.L = &c.mu
	c.bw = bufio.NewWriterSize(nc, writeBufferSize)
	c.br = bufio.NewReaderSize(nc, 16<<10)
	c.fr = http2.NewFramer(c.bw, c.br)
	c.fr.SetMaxReadFrameSize(s.MaxReadFrameSize)
	c.fr.MaxHeaderListSize = s.MaxHeaderListSize
	c.fr.ReadMetaHeaders = hpack.NewDecoder(initialHeaderTable, nil)
	c.fr.SetReuseFrames()
	c.enc = hpack.NewEncoder(&c.encBuf)
	c.peerMaxFrame.Store(minMaxFrameSize)
	c.sendConn, c.peerInitial = defaultWindow, defaultWindow
	c.recvConn = int64(s.Window)
	return c
}

const (
	initialHeaderTable = 4096
	minMaxFrameSize    = 16384
	defaultWindow      = 65535
	maxWindow          = 1<<31 - 1
)

var clientPreface = []byte(http2.ClientPreface)

// serve runs the read loop, then waits for the handlers to end.
func (c *conn) serve() {
	defer func() {
		c.kill()
		c.handlers.Wait()
	}()
	c.wmu.Lock()
	c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: c.srv.MaxReadFrameSize},
		http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: c.srv.MaxStreams},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: c.srv.MaxHeaderListSize},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(c.srv.Window)},
	)
	if c.srv.Window > defaultWindow {
		c.fr.WriteWindowUpdate(0, uint32(c.srv.Window-defaultWindow))
	}
	err := c.bw.Flush()
	c.wmu.Unlock()
	if err != nil {
		return
	}
	c.nc.SetReadDeadline(time.Now().Add(c.srv.PrefaceTimeout))
	var preface [len(http2.ClientPreface)]byte
	if _, err := io.ReadFull(c.br, preface[:]); err != nil || !bytes.Equal(preface[:], clientPreface) {
		c.fail(http2.ErrCodeProtocol)
		return
	}
	f, err := c.fr.ReadFrame()
	if err != nil {
		c.readFailed(err)
		return
	}
	if _, ok := f.(*http2.SettingsFrame); !ok {
		c.fail(http2.ErrCodeProtocol)
		return
	}
	if err := c.process(f); err != nil {
		c.readFailed(err)
		return
	}
	c.nc.SetReadDeadline(time.Now().Add(c.srv.IdleTimeout))
	for {
		f, err := c.fr.ReadFrame()
		if err == nil {
			err = c.process(f)
		}
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				c.streamFailed(se)
				continue
			}
			c.readFailed(err)
			return
		}
		if c.ended() {
			return
		}
	}
}

// ended says whether a connection that sent or received GOAWAY has no
// streams left.
func (c *conn) ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return (c.sentGoAway || c.peerGoAway) && len(c.streams) == 0 && c.running == 0
}

// readFailed ends the connection after a read error: a connection error
// is answered with GOAWAY; a timeout ends an idle (or going away)
// connection quietly.
func (c *conn) readFailed(err error) {
	var ce http2.ConnectionError
	switch {
	case errors.As(err, &ce):
		c.fail(http2.ErrCode(ce))
	case errors.Is(err, http2.ErrFrameTooLarge):
		c.fail(http2.ErrCodeFrameSize)
	case isTimeout(err):
		c.goAway(http2.ErrCodeNo, true)
	}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// streamFailed resets one stream; the connection goes on.
func (c *conn) streamFailed(se http2.StreamError) {
	c.mu.Lock()
	if se.StreamID%2 == 1 && se.StreamID > c.maxID {
		// A new stream that was malformed is over, never reopened.
		c.maxID = se.StreamID
	}
	st := c.streams[se.StreamID]
	c.mu.Unlock()
	if st != nil {
		c.resetStream(st, se.Code, errStreamReset)
		return
	}
	c.queueControl(control{kind: ctrlReset, id: se.StreamID, val: uint32(se.Code)})
}

// fail ends the connection with a GOAWAY with code.
func (c *conn) fail(code http2.ErrCode) { c.goAway(code, true) }

// goAway sends a GOAWAY with code, naming the last stream the connection
// serves; closing ends the connection at once (an error, or a timeout),
// otherwise the streams it has go on (shutdown).
func (c *conn) goAway(code http2.ErrCode, closing bool) {
	c.mu.Lock()
	already := c.sentGoAway
	if !already {
		c.sentGoAway, c.goAwayID = true, c.maxID
	}
	last, idle := c.goAwayID, len(c.streams) == 0 && c.running == 0
	c.mu.Unlock()
	if closing {
		c.nc.SetWriteDeadline(time.Now().Add(goAwayTimeout))
	}
	if !already || closing {
		c.lockWrite()
		c.fr.WriteGoAway(last, code, nil)
		c.unlockWrite(true)
	}
	if closing {
		c.kill()
	} else if idle {
		// Wake the read loop to end.
		c.nc.SetReadDeadline(time.Unix(1, 0))
	}
}

// kill closes the connection: every stream is over.
func (c *conn) kill() {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	c.dead = true
	streams := make([]*stream, 0, len(c.streams))
	for _, st := range c.streams {
		streams = append(streams, st)
	}
	c.mu.Unlock()
	c.nc.Close()
	for _, st := range streams {
		c.resetStream(st, 0, errConnClosed)
	}
	c.cond.Broadcast()
}

var (
	errStreamReset = errors.New("http2: stream reset")
	errConnClosed  = errors.New("http2: connection closed")
)

// process handles one frame the client sent.
func (c *conn) process(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.MetaHeadersFrame:
		return c.processHeaders(f)
	case *http2.DataFrame:
		return c.processData(f)
	case *http2.SettingsFrame:
		return c.processSettings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			return c.queueControl(control{kind: ctrlPing, data: f.Data})
		}
	case *http2.WindowUpdateFrame:
		return c.processWindowUpdate(f)
	case *http2.RSTStreamFrame:
		return c.processReset(f)
	case *http2.PriorityFrame:
		if f.StreamDep == f.StreamID {
			return http2.StreamError{StreamID: f.StreamID, Code: http2.ErrCodeProtocol}
		}
		return c.countEmpty()
	case *http2.GoAwayFrame:
		c.mu.Lock()
		c.peerGoAway = true
		c.mu.Unlock()
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol)
	default:
		// Unknown frame types are ignored (RFC 9113 5.5), but counted.
		return c.countEmpty()
	}
	return nil
}

// countEmpty counts a frame that carried nothing.
func (c *conn) countEmpty() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.empty++; c.empty > maxEmptyFrames {
		return http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
	}
	return nil
}

func (c *conn) processSettings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	if f.NumSettings() > 100 || f.HasDuplicates() {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingHeaderTableSize:
			return c.queueControl(control{kind: ctrlTableSize, val: s.Val})
		case http2.SettingMaxFrameSize:
			c.peerMaxFrame.Store(s.Val)
		case http2.SettingInitialWindowSize:
			c.mu.Lock()
			defer c.mu.Unlock()
			delta := int64(s.Val) - c.peerInitial
			c.peerInitial = int64(s.Val)
			for _, st := range c.streams {
				if st.sendWindow += delta; st.sendWindow > maxWindow {
					return http2.ConnectionError(http2.ErrCodeFlowControl)
				}
			}
			c.cond.Broadcast()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.queueControl(control{kind: ctrlSettingsAck})
}

func (c *conn) processWindowUpdate(f *http2.WindowUpdateFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.StreamID == 0 {
		if c.sendConn += int64(f.Increment); c.sendConn > maxWindow {
			return http2.ConnectionError(http2.ErrCodeFlowControl)
		}
		c.cond.Broadcast()
		return nil
	}
	st := c.streams[f.StreamID]
	switch {
	case f.StreamID > c.maxID:
		return http2.ConnectionError(http2.ErrCodeProtocol)
	case st == nil:
		return nil
	}
	if st.sendWindow += int64(f.Increment); st.sendWindow > maxWindow {
		return http2.StreamError{StreamID: f.StreamID, Code: http2.ErrCodeFlowControl}
	}
	c.cond.Broadcast()
	return nil
}

func (c *conn) processReset(f *http2.RSTStreamFrame) error {
	c.mu.Lock()
	if f.StreamID > c.maxID {
		c.mu.Unlock()
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	st := c.streams[f.StreamID]
	if st != nil && !st.answered {
		c.cancelled++
	}
	tooMany := c.cancelled > maxCancelled
	c.mu.Unlock()
	if st != nil {
		c.dropStream(st, errStreamReset)
	}
	if tooMany {
		return http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
	}
	return nil
}

// processData takes a DATA frame: its payload goes to its stream's body,
// within the windows the client was given.
func (c *conn) processData(f *http2.DataFrame) error {
	id, size := f.StreamID, int64(f.Length)
	data := f.Data()
	c.mu.Lock()
	if size > c.recvConn {
		c.mu.Unlock()
		return http2.ConnectionError(http2.ErrCodeFlowControl)
	}
	c.recvConn -= size
	st := c.streams[id]
	if st == nil || st.remoteDone {
		// Closed: its bytes go back to the connection's window.
		c.unackedConn += size
		c.mu.Unlock()
		c.giveBack(nil)
		if id > c.maxID {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		if len(data) == 0 {
			if err := c.countEmpty(); err != nil {
				return err
			}
		}
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeStreamClosed}
	}
	if size > st.recvWindow {
		c.unackedConn += size
		c.mu.Unlock()
		c.giveBack(nil)
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeFlowControl}
	}
	st.recvWindow -= size
	// Padding goes back at once.
	pad := size - int64(len(data))
	st.unacked += pad
	c.unackedConn += pad
	st.received += int64(len(data))
	if st.declared >= 0 && st.received > st.declared {
		c.mu.Unlock()
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
	}
	st.body.Write(data)
	end := f.StreamEnded()
	if end && st.declared >= 0 && st.received != st.declared {
		c.mu.Unlock()
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
	}
	empty := len(data) == 0 && !end
	if end {
		c.remoteEnded(st)
	}
	c.mu.Unlock()
	st.signal()
	if pad > 0 {
		c.giveBack(nil)
	}
	if empty {
		return c.countEmpty()
	}
	return nil
}

// remoteEnded marks st's request as whole; under mu.
func (c *conn) remoteEnded(st *stream) {
	st.remoteDone = true
	if st.bodyErr == nil {
		st.bodyErr = io.EOF
	}
	if st.localDone {
		c.closeStream(st)
	}
}

// processHeaders opens a stream (or takes its trailers).
func (c *conn) processHeaders(f *http2.MetaHeadersFrame) error {
	id := f.StreamID
	if id%2 == 0 {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	if f.HasPriority() && f.Priority.StreamDep == id {
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
	}
	c.mu.Lock()
	if id <= c.maxID {
		st := c.streams[id]
		defer c.mu.Unlock()
		switch {
		case st == nil:
			// A stream id not above the last (RFC 9113 5.1.1), or
			// trailers of a stream that is over.
			return http2.ConnectionError(http2.ErrCodeProtocol)
		case st.remoteDone:
			return http2.StreamError{StreamID: id, Code: http2.ErrCodeStreamClosed}
		case !f.StreamEnded():
			// Trailers end the stream.
			return http2.ConnectionError(http2.ErrCodeProtocol)
		case len(f.PseudoFields()) > 0, st.declared >= 0 && st.received != st.declared:
			return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
		}
		// The request's trailers are not passed on.
		c.remoteEnded(st)
		defer st.signal()
		return nil
	}
	c.maxID = id
	if c.sentGoAway || c.dead {
		// Past the GOAWAY: the client sends it again elsewhere.
		c.mu.Unlock()
		return nil
	}
	if uint32(len(c.streams)) >= c.srv.MaxStreams {
		c.mu.Unlock()
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeRefusedStream}
	}
	c.mu.Unlock()
	st := &stream{c: c, id: id, declared: -1, notify: make(chan struct{}, 1)}
	if f.Truncated {
		st.handler = headerListTooLong
		st.noBody = f.StreamEnded()
	} else if err := st.readRequest(f); err != nil {
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol, Cause: err}
	}
	if st.handler == nil {
		st.handler = c.srv.Handler
	}
	st.ctx, st.cancel = context.WithCancel(c.base)
	c.mu.Lock()
	st.recvWindow = int64(c.srv.Window)
	st.sendWindow = c.peerInitial
	if f.StreamEnded() {
		st.remoteDone = true
		st.bodyErr = io.EOF
	}
	if len(c.streams) == 0 {
		c.nc.SetReadDeadline(time.Time{})
	}
	c.streams[id] = st
	c.empty = max(0, c.empty-1)
	run := c.running < int(c.srv.MaxStreams)
	if run {
		c.running++
	} else {
		c.queued = append(c.queued, st)
	}
	tooMany := len(c.queued) > queuedPerStream*int(c.srv.MaxStreams)
	c.mu.Unlock()
	if tooMany {
		return http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
	}
	if run {
		c.handlers.Add(1)
		go c.runHandlers(st)
	}
	return nil
}

// headerListTooLong answers a request whose header list is over the limit.
var headerListTooLong = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
	io.WriteString(w, "431 Request Header Fields Too Large\n")
})

// runHandlers runs st's handler, then those of queued streams.
func (c *conn) runHandlers(st *stream) {
	defer c.handlers.Done()
	for st != nil {
		c.runHandler(st)
		c.mu.Lock()
		st = nil
		for len(c.queued) > 0 && st == nil {
			next := c.queued[0]
			c.queued = c.queued[1:]
			if !next.reset {
				st = next
			}
		}
		if st == nil {
			c.running--
		}
		idle := c.running == 0 && len(c.streams) == 0
		ending := idle && (c.sentGoAway || c.peerGoAway || c.dead)
		c.mu.Unlock()
		if ending {
			c.nc.SetReadDeadline(time.Unix(1, 0))
		}
	}
}

// runHandler serves one stream: a handler that panics (as the gateway's
// does with http.ErrAbortHandler when its backend broke off) resets it.
func (c *conn) runHandler(st *stream) {
	rw := &responseWriter{st: st, clen: -1}
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler && c.srv.Log != nil {
				c.srv.Log.Error("http2 handler panicked", "panic", v)
			}
			c.resetStream(st, http2.ErrCodeInternal, errStreamReset)
		}
		st.cancel()
		rw.release()
	}()
	req := st.request()
	st.handler.ServeHTTP(rw, req)
	rw.finish()
}
