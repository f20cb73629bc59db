package h2

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// A flushed response reaches the client before the handler goes on
// (server-sent events).
func TestServer_StreamingFlush(t *testing.T) {
	next := make(chan struct{})
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			io.WriteString(w, "data: "+string(rune('a'+i))+"\n\n")
			w.(http.Flusher).Flush()
			<-next
		}
	}))
	resp, err := s.client(t).Get("https://h2.test/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil || line != "data: "+string(rune('a'+i))+"\n" {
			t.Fatalf("event %d: %q %v", i, line, err)
		}
		br.ReadString('\n')
		next <- struct{}{}
	}
}

// Trailers the handler declares are sent after the body.
func TestServer_Trailers(t *testing.T) {
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Grpc-Status")
		io.WriteString(w, "body")
		w.Header().Set("Grpc-Status", "0")
		w.Header().Set(http.TrailerPrefix+"X-Late", "yes")
	}))
	resp, err := s.client(t).Get("https://h2.test/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "body" || resp.Trailer.Get("Grpc-Status") != "0" || resp.Trailer.Get("X-Late") != "yes" || resp.Header.Get("Grpc-Status") != "" {
		t.Fatalf("body %q header %v trailer %v", body, resp.Header, resp.Trailer)
	}
}

// A handler that breaks off (http.ErrAbortHandler, as the gateway's does
// when its backend dies mid-body), or whose body falls short of its
// Content-Length, resets the stream: never a clean END_STREAM.
func TestServer_TruncatedResponses(t *testing.T) {
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/abort":
			io.WriteString(w, strings.Repeat("a", 40<<10))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case "/short":
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "only this")
		}
	}))
	rc := s.dial(t)
	for i, path := range []string{"/abort", "/short"} {
		id := uint32(2*i + 1)
		rc.writeHeaders(id, true, rc.headers(":method", "GET", ":scheme", "https", ":path", path, ":authority", "h2.test"))
		if code := rc.reset(id); code != http2.ErrCodeInternal {
			t.Fatalf("%s: reset %v, want INTERNAL_ERROR", path, code)
		}
	}
	resp, err := s.client(t).Get("https://h2.test/abort")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("the Transport read a broken-off body as whole")
	}
}

// HEAD gets the head (with its Content-Length) and no body; 103 Early
// Hints pass before the answer; Expect: 100-continue is answered when
// the handler reads the body.
func TestServer_HeadInformationalAndContinue(t *testing.T) {
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hints" {
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Length", "5")
		w.Write([]byte("hello")[:5-min(5, len(body))])
		w.Write(body)
	}))
	client := s.client(t)
	req, _ := http.NewRequest("HEAD", "https://h2.test/", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != 5 {
		t.Fatalf("HEAD: %d, length %d", resp.StatusCode, resp.ContentLength)
	}

	var hints []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, h.Get("Link"))
		return nil
	}}
	req, _ = http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "GET", "https://h2.test/hints", nil)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(hints) != 1 || hints[0] != "</a.css>; rel=preload" || string(body) != "hello" || resp.Header.Get("Link") != "" {
		t.Fatalf("hints %q, body %q, header %v", hints, body, resp.Header)
	}

	rc := s.dial(t)
	rc.request(1, "POST", false, "expect", "100-continue", "content-length", "5")
	h := rc.expect(func(f http2.Frame) bool { _, ok := f.(*http2.MetaHeadersFrame); return ok }).(*http2.MetaHeadersFrame)
	if h.PseudoValue("status") != "100" {
		t.Fatalf("status %s, want 100 first", h.PseudoValue("status"))
	}
	rc.fr.WriteData(1, true, []byte("HELLO"))
	if status, body, err := rc.response(1); status != "200" || string(body) != "HELLO" || err != nil {
		t.Fatalf("after 100: %s %q %v", status, body, err)
	}
}

// The body's read deadline (the gateway's body idle timeout) ends a
// read that waits for a client that stopped sending; a client's reset
// cancels the request's context and fails its body.
func TestServer_BodyDeadlineAndReset(t *testing.T) {
	results := make(chan error, 2)
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/deadline" {
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		}
		_, err := io.ReadAll(r.Body)
		if r.URL.Path == "/reset" {
			<-r.Context().Done()
		}
		results <- err
	}))
	rc := s.dial(t)
	rc.writeHeaders(1, false, rc.headers(":method", "POST", ":scheme", "https", ":path", "/deadline", ":authority", "h2.test"))
	rc.fr.WriteData(1, false, []byte("part"))
	if err := <-results; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled body: %v, want a deadline error", err)
	}
	rc.writeHeaders(3, false, rc.headers(":method", "POST", ":scheme", "https", ":path", "/reset", ":authority", "h2.test"))
	rc.fr.WriteData(3, false, []byte("part"))
	rc.fr.WriteRSTStream(3, http2.ErrCodeCancel)
	if err := <-results; err == nil {
		t.Fatal("a reset stream's body read as whole")
	}
}
