package app_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app"
)

// Bodies over BodyLimit are refused on every route but the local preview
// upload, which takes bundles up to its own limit; a body without a
// Content-Length is held to the same limits.
func TestBodyLimit_PerRoute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	base := b.listen(t)
	big := bytes.Repeat([]byte("x"), app.BodyLimit+1)
	post := func(path string, body io.Reader, length int64) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	// A reader that hides its length: the client sends it chunked.
	chunked := func(p []byte) io.Reader { return io.MultiReader(bytes.NewReader(p)) }

	for _, path := range []string{"/login", "/api/v1/applications/apply", "/api/v1/applications/some-app/secrets/x"} {
		if got := post(path, bytes.NewReader(big), int64(len(big))); got != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s with %d bytes: %d, want 413", path, len(big), got)
		}
		if got := post(path, chunked(big), -1); got != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s with %d chunked bytes: %d, want 413", path, len(big), got)
		}
	}
	// The upload route reads the whole bundle, then asks who is calling.
	upload := "/api/v1/applications/some-app/previews/local"
	if got := post(upload, bytes.NewReader(big), int64(len(big))); got != http.StatusUnauthorized {
		t.Errorf("POST %s with %d bytes: %d, want 401 (past the body limit)", upload, len(big), got)
	}
	if got := post(upload, chunked(big), -1); got != http.StatusUnauthorized {
		t.Errorf("POST %s with %d chunked bytes: %d, want 401 (past the body limit)", upload, len(big), got)
	}
	// A small body still reaches its handler.
	if got := post("/login", strings.NewReader("email=a%40example.com"), -1); got == http.StatusRequestEntityTooLarge {
		t.Errorf("POST /login with a small chunked body: %d", got)
	}
}
