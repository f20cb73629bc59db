package h2

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// blockingHandler holds every request until release is closed.
func blockingHandler(started chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
}

// Streams beyond MaxStreams are refused with REFUSED_STREAM; the others
// go on.
func TestServer_MaxConcurrentStreams(t *testing.T) {
	started, release := make(chan struct{}, 16), make(chan struct{})
	s := startServer(t, blockingHandler(started, release))
	rc := s.dial(t)
	id := uint32(1)
	for range s.srv.MaxStreams {
		rc.request(id, "GET", true)
		<-started
		id += 2
	}
	rc.request(id, "GET", true)
	if code := rc.reset(id); code != http2.ErrCodeRefusedStream {
		t.Fatalf("stream beyond the limit: %v, want REFUSED_STREAM", code)
	}
	close(release)
	if status, _, err := rc.response(1); status != "200" || err != nil {
		t.Fatalf("first stream: %s %v", status, err)
	}
}

// Rapid reset (CVE-2023-44487): a client that opens streams and resets
// them at once, whose handlers keep running, gets GOAWAY
// ENHANCE_YOUR_CALM once the handlers waiting to run pass the bound; and
// one whose reset streams outnumber its answered ones by maxCancelled too.
func TestServer_RapidReset(t *testing.T) {
	var running atomic.Int32
	// Handlers that ignore their cancelled context: the worst case.
	stuck := make(chan struct{})
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running.Add(1)
		<-stuck
	}))
	// (Cleanups run last first: the handlers end before the server.)
	t.Cleanup(func() { close(stuck) })
	rc := s.dial(t)
	get := rc.headers(":method", "GET", ":scheme", "https", ":path", "/", ":authority", "h2.test")
	code := rc.floodUntilGoAway(1000, openAndReset(rc, get, true))
	if code != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("rapid reset: GOAWAY %v, want ENHANCE_YOUR_CALM", code)
	}
	if n := running.Load(); n > int32(s.srv.MaxStreams) {
		t.Fatalf("%d handlers ran at once, more than MaxStreams", n)
	}

	// Quick handlers: the resets alone are bounded.
	s2 := startServer(t, echo)
	rc = s2.dial(t)
	post := rc.headers(":method", "POST", ":scheme", "https", ":path", "/", ":authority", "h2.test")
	code = rc.floodUntilGoAway(maxCancelled+100, openAndReset(rc, post, false))
	if code != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("resets: GOAWAY %v, want ENHANCE_YOUR_CALM", code)
	}
}

// openAndReset returns a write that opens the next stream with block
// and resets it at once.
func openAndReset(rc *rawConn, block []byte, end bool) func() error {
	id := uint32(1)
	return func() error {
		defer func() { id += 2 }()
		if err := rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: end, EndHeaders: true}); err != nil {
			return err
		}
		return rc.fr.WriteRSTStream(id, http2.ErrCodeCancel)
	}
}

// Frames that carry nothing (empty DATA, PRIORITY, unknown types) are
// bounded: GOAWAY ENHANCE_YOUR_CALM.
func TestServer_EmptyFrameFlood(t *testing.T) {
	release := make(chan struct{})
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body.Read(make([]byte, 1))
		<-release
	}))
	t.Cleanup(func() { close(release) })
	for _, flood := range []struct {
		name  string
		write func(rc *rawConn) error
	}{
		{"empty DATA", func(rc *rawConn) error { return rc.fr.WriteData(1, false, nil) }},
		{"PRIORITY", func(rc *rawConn) error {
			return rc.fr.WritePriority(3, http2.PriorityParam{StreamDep: 1, Weight: 1})
		}},
		{"unknown frame type", func(rc *rawConn) error { return rc.fr.WriteRawFrame(0x20, 0, 0, nil) }},
	} {
		rc := s.dial(t)
		rc.request(1, "POST", false)
		if code := rc.floodUntilGoAway(3*maxEmptyFrames, func() error { return flood.write(rc) }); code != http2.ErrCodeEnhanceYourCalm {
			t.Errorf("%s: GOAWAY %v, want ENHANCE_YOUR_CALM", flood.name, code)
		}
	}
}

// A client that sends PINGs or SETTINGS while it reads nothing cannot
// make the server queue their acknowledgements without bound: the
// connection ends. (A handler's response fills the connection, whose
// writer then waits for the client, so every acknowledgement queues.)
func TestServer_ControlFloods(t *testing.T) {
	big := bytes.Repeat([]byte("z"), 64<<20)
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(big)
	}))
	for _, flood := range []struct {
		name  string
		write func(rc *rawConn) error
	}{
		{"PING", func(rc *rawConn) error { return rc.fr.WritePing(false, [8]byte{}) }},
		{"SETTINGS", func(rc *rawConn) error { return rc.fr.WriteSettings() }},
	} {
		rc := s.dial(t, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1})
		rc.fr.WriteWindowUpdate(0, 1<<31-1-65535)
		rc.request(1, "GET", true)
		// The response's first frame says the handler writes.
		rc.expect(func(f http2.Frame) bool { _, ok := f.(*http2.DataFrame); return ok })
		var err error
		for range 20 * maxQueuedControl {
			if err = flood.write(rc); err != nil {
				break
			}
		}
		if err == nil {
			t.Errorf("%s flood: %d frames were taken while nothing was read", flood.name, 20*maxQueuedControl)
		}
	}
}

// The client's windows bound what is sent: with an initial window of 10
// bytes, each DATA frame fits what was granted, and the whole body
// arrives as the client grants more, slowly.
func TestServer_SendFlowControl(t *testing.T) {
	body := strings.Repeat("0123456789", 20<<10)
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body)
	}))
	rc := s.dial(t, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10}, http2.Setting{ID: http2.SettingMaxFrameSize, Val: 16384})
	rc.request(1, "GET", true)
	// The connection's window is the default 65535: grant it as used.
	streamWin, connWin := int64(10), int64(65535)
	var got []byte
	for {
		f := rc.next()
		d, ok := f.(*http2.DataFrame)
		if !ok {
			continue
		}
		n := int64(d.Length)
		if n > streamWin || n > connWin {
			t.Fatalf("DATA of %d bytes with windows %d (stream) and %d (connection)", n, streamWin, connWin)
		}
		streamWin -= n
		connWin -= n
		got = append(got, d.Data()...)
		if d.StreamEnded() {
			break
		}
		if streamWin == 0 {
			// Slowly: a little more each time.
			grant := int64(len(got)%7000 + 1)
			rc.fr.WriteWindowUpdate(1, uint32(grant))
			streamWin += grant
		}
		if connWin < 20000 {
			rc.fr.WriteWindowUpdate(0, 40000)
			connWin += 40000
		}
	}
	if string(got) != body {
		t.Fatalf("got %d bytes, want %d", len(got), len(body))
	}
}

// Request bodies: the client gets WINDOW_UPDATEs as the handler reads,
// so a body larger than the window goes through; a client that sends
// beyond the window it was given gets FLOW_CONTROL_ERROR.
func TestServer_ReceiveFlowControl(t *testing.T) {
	s := startServer(t, echo)
	rc := s.dial(t)
	total := 3 * int(s.srv.Window)
	rc.request(1, "POST", false)
	chunk := bytes.Repeat([]byte("w"), 16<<10)
	streamWin, connWin := int(s.srv.Window), int(s.srv.Window)
	sent := 0
	var got []byte
	for sent < total {
		for streamWin >= len(chunk) && connWin >= len(chunk) && sent < total {
			rc.fr.WriteData(1, sent+len(chunk) >= total, chunk)
			sent += len(chunk)
			streamWin -= len(chunk)
			connWin -= len(chunk)
		}
		if sent >= total {
			break
		}
		switch f := rc.next().(type) {
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				connWin += int(f.Increment)
			} else {
				streamWin += int(f.Increment)
			}
		case *http2.DataFrame:
			got = append(got, f.Data()...)
		}
	}
	_, body, err := rc.response(1)
	got = append(got, body...)
	if err != nil || len(got) != len("/:")+total {
		t.Fatalf("echoed %d bytes (%v), want %d", len(got), err, len("/:")+total)
	}

	// Beyond the window: a handler that reads nothing.
	stuck := make(chan struct{})
	s2 := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stuck }))
	t.Cleanup(func() { close(stuck) })
	rc = s2.dial(t)
	rc.request(1, "POST", false)
	frames := int(s2.srv.Window)/len(chunk) + 1
	if code := rc.floodUntilGoAway(frames, func() error { return rc.fr.WriteData(1, false, chunk) }); code != http2.ErrCodeFlowControl {
		t.Fatalf("overflow: GOAWAY %v, want FLOW_CONTROL_ERROR", code)
	}
}

// An idle connection, and one whose server shuts down, get GOAWAY
// NO_ERROR; a stream in flight at shutdown is answered first.
func TestServer_GoAway(t *testing.T) {
	s := startServer(t, echo, func(s *Server) { s.IdleTimeout = 50 * time.Millisecond })
	rc := s.dial(t)
	if code := rc.goAway(); code != http2.ErrCodeNo {
		t.Fatalf("idle: GOAWAY %v", code)
	}

	started, release := make(chan struct{}, 1), make(chan struct{})
	s2 := startServer(t, blockingHandler(started, release))
	rc = s2.dial(t)
	rc.request(1, "GET", true)
	<-started
	s2.srv.Shutdown()
	ga := rc.expect(func(f http2.Frame) bool { _, ok := f.(*http2.GoAwayFrame); return ok }).(*http2.GoAwayFrame)
	if ga.ErrCode != http2.ErrCodeNo || ga.LastStreamID != 1 {
		t.Fatalf("shutdown: GOAWAY %v last %d", ga.ErrCode, ga.LastStreamID)
	}
	close(release)
	if status, _, err := rc.response(1); status != "200" || err != nil {
		t.Fatalf("in flight at shutdown: %s %v", status, err)
	}
}
