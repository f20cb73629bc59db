package archive

import (
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// Path is the endpoint's one URL path.
const Path = "/archive"

// Endpoint is the worker's side of one run: it accepts one archive (PUT)
// or serves one (GET) to a client bearing Token. Upload and Download are
// called with the request's context; either may be nil to refuse that
// direction.
type Endpoint struct {
	Token    string
	Upload   func(ctx context.Context, r io.Reader) error
	Download func(ctx context.Context, w io.Writer) error
}

func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if e.Token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(e.Token)) != 1 {
		http.Error(w, "archive_token_invalid", http.StatusUnauthorized)
		return
	}
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	switch {
	case r.Method == http.MethodPut && e.Upload != nil:
		if err := e.Upload(r.Context(), r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && e.Download != nil:
		w.Header().Set("Content-Type", "application/x-tar")
		// A failure midway cannot change the status any more: the client
		// sees a truncated stream, which its tar reader refuses.
		_ = e.Download(r.Context(), w)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// client returns an HTTP client and base URL for url: unix:///path/to.sock
// or http://host:port.
func client(url string) (*http.Client, string, error) {
	if sock, ok := strings.CutPrefix(url, "unix://"); ok {
		tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}}
		return &http.Client{Transport: tr}, "http://archive", nil
	}
	if strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://") {
		return &http.Client{}, strings.TrimSuffix(url, "/"), nil
	}
	return nil, "", fmt.Errorf("archive endpoint %q: use unix:///path or http(s)://host:port", url)
}

// Send archives dir and uploads it to the endpoint at url.
func Send(ctx context.Context, url, token, dir string) (Stats, error) {
	c, base, err := client(url)
	if err != nil {
		return Stats{}, err
	}
	pr, pw := io.Pipe()
	var st Stats
	done := make(chan error, 1)
	go func() {
		var err error
		st, err = Write(pw, dir)
		pw.CloseWithError(err)
		done <- err
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+Path, pr)
	if err != nil {
		return st, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/x-tar")
	resp, err := c.Do(req)
	if err != nil {
		pr.CloseWithError(err)
		<-done
		return st, fmt.Errorf("upload archive: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	// A refusal may come before the whole body was read, failing the
	// writer: the endpoint's answer says why.
	pr.CloseWithError(io.ErrClosedPipe)
	werr := <-done
	if resp.StatusCode/100 != 2 {
		return st, fmt.Errorf("upload archive: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return st, werr
}

// Receive downloads an archive from the endpoint at url and replaces the
// contents of dir with it.
func Receive(ctx context.Context, url, token, dir string) (Stats, error) {
	c, base, err := client(url)
	if err != nil {
		return Stats{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+Path, nil)
	if err != nil {
		return Stats{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return Stats{}, fmt.Errorf("download archive: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return Stats{}, fmt.Errorf("download archive: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	if err := Clear(dir); err != nil {
		return Stats{}, err
	}
	return Extract(resp.Body, dir)
}
