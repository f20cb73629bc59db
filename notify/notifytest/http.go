package notifytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Request is one request the receiver got.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// HTTPReceiver records POSTs and answers each with the next status of its
// script (then 200, or 204 for Discord-like receivers).
type HTTPReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
	statuses []int
	ok       int
	got      chan struct{}
}

// NewHTTPReceiver starts a receiver answering ok (such as 200 or 204)
// after the statuses given, in order.
func NewHTTPReceiver(t testing.TB, ok int, statuses ...int) *HTTPReceiver {
	t.Helper()
	r := &HTTPReceiver{statuses: statuses, ok: ok, got: make(chan struct{}, 1000)}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *HTTPReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.requests = append(r.requests, Request{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body})
	status := r.ok
	if len(r.statuses) > 0 {
		status, r.statuses = r.statuses[0], r.statuses[1:]
	}
	r.mu.Unlock()
	w.WriteHeader(status)
	r.got <- struct{}{}
}

// Requests returns what was received so far.
func (r *HTTPReceiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Wait waits until n requests arrived, failing the test after timeout.
func (r *HTTPReceiver) Wait(t testing.TB, n int, timeout time.Duration) []Request {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if got := r.Requests(); len(got) >= n {
			return got
		}
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("receiver got %d requests, want %d", len(r.Requests()), n)
		}
	}
}
