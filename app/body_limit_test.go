package app_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app"
)

// Bodies over BodyLimit are refused on every route but the local preview
// upload, which takes bundles up to its own limit; a chunked body without
// a Content-Length is held to the same limits.
func TestBodyLimit_PerRoute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	addr := strings.TrimPrefix(b.listen(t), "http://")
	big := bytes.Repeat([]byte("x"), app.BodyLimit+1)

	// post sends a request over its own connection and returns the status.
	// The body is written beside the read, since the server may answer
	// (and close) before it has read it all; a write cut short is fine.
	post := func(path string, chunked, sendBody bool) int {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		head := "POST " + path + " HTTP/1.1\r\nHost: slipway\r\nContent-Type: application/octet-stream\r\n"
		if chunked {
			head += "Transfer-Encoding: chunked\r\n\r\n"
		} else {
			head += fmt.Sprintf("Content-Length: %d\r\n\r\n", len(big))
		}
		go func() {
			w := bufio.NewWriter(conn)
			_, _ = w.WriteString(head)
			switch {
			case chunked:
				for rest := big; len(rest) > 0; {
					n := min(len(rest), 64<<10)
					fmt.Fprintf(w, "%x\r\n", n)
					_, _ = w.Write(rest[:n])
					_, _ = w.WriteString("\r\n")
					rest = rest[n:]
				}
				_, _ = w.WriteString("0\r\n\r\n")
			case sendBody:
				_, _ = w.Write(big)
			}
			_ = w.Flush()
		}()
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		return res.StatusCode
	}

	for _, path := range []string{"/login", "/api/v1/applications/apply", "/api/v1/applications/some-app/secrets/x"} {
		// Refused on the announced length alone: no body is sent.
		if got := post(path, false, false); got != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s announcing %d bytes: %d, want 413", path, len(big), got)
		}
		if got := post(path, true, true); got != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s with %d chunked bytes: %d, want 413", path, len(big), got)
		}
	}
	// The upload route reads the whole bundle, then asks who is calling.
	upload := "/api/v1/applications/some-app/previews/local?slot=a"
	if got := post(upload, false, true); got != http.StatusUnauthorized {
		t.Errorf("POST %s with %d bytes: %d, want 401 (past the body limit)", upload, len(big), got)
	}
	if got := post(upload, true, true); got != http.StatusUnauthorized {
		t.Errorf("POST %s with %d chunked bytes: %d, want 401 (past the body limit)", upload, len(big), got)
	}
}
