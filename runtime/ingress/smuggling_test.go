package ingress

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGateway_NoRequestSmuggling sends the classic desync attacks through
// the plain-HTTP listener: each hides a request in what one reading of an
// ambiguous request takes for its body. The hidden request carries its own
// X-Forwarded-For, which the gateway replaces in every request it reads
// as one: a backend that receives it got a request the gateway never saw.
// The strict parser refuses every one of the attacks, with 400 or 501,
// and closes the connection; whatever the gateway does with them, the
// hidden request must never reach the backend. A control sends the same request openly, to show that the check
// tells the two apart.
func TestGateway_NoRequestSmuggling(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	port := freePort(t)
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(port)))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" xff="+r.Header.Get("X-Forwarded-For"))
		mu.Unlock()
		fmt.Fprintf(w, "%s %s body=%d", r.Method, r.URL.Path, len(body))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	b.resolver.set("web", "127.0.0.1")
	const host = "smuggle.example.com"
	b.publish(t, 1, Route{Hostname: host, Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}})
	// Resolve the backend set first, so the attacks meet the event loop
	// (it hands over the first request of a backend set not resolved yet).
	if code, _, _ := get(t, b.addrs.HTTP, host, "/warm-up"); code != 200 {
		t.Fatalf("warm-up: %d", code)
	}

	smuggled := "GET /smuggled HTTP/1.1\r\nHost: " + host + "\r\nX-Forwarded-For: 6.6.6.6\r\n\r\n"
	chunk := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(smuggled), smuggled)
	post := "POST / HTTP/1.1\r\nHost: " + host + "\r\n"
	attacks := map[string]string{
		"CL.TE":                            post + fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n", len("0\r\n\r\n"+smuggled)) + "0\r\n\r\n" + smuggled,
		"TE.CL":                            post + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk,
		"TE.TE obfuscated":                 post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n" + chunk,
		"TE with a space before the colon": post + "Content-Length: 4\r\nTransfer-Encoding : chunked\r\n\r\n" + chunk,
		"TE xchunked":                      post + fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: xchunked\r\n\r\n", len(chunk)) + chunk,
		"TE folded":                        post + fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: identity\r\n chunked\r\n\r\n", len(chunk)) + chunk,
		"TE after a vertical tab":          post + "Content-Length: 4\r\nTransfer-Encoding:\x0bchunked\r\n\r\n" + chunk,
		"two Content-Lengths":              post + fmt.Sprintf("Content-Length: 0\r\nContent-Length: %d\r\n\r\n", len(smuggled)) + smuggled,
		"CL with a space before the colon": post + fmt.Sprintf("Content-Length : %d\r\n\r\n", len(smuggled)) + smuggled,
		"CL with a plus sign":              post + fmt.Sprintf("Content-Length: +%d\r\n\r\n", len(smuggled)) + smuggled,
		"CL in a folded line":              post + fmt.Sprintf("X-Pad: a\r\n Content-Length: %d\r\n\r\n", len(smuggled)) + smuggled,
		"LF-only CL line":                  post + fmt.Sprintf("X-Pad: a\nContent-Length: %d\r\n\r\n", len(smuggled)) + smuggled,
		"NUL in a header":                  post + fmt.Sprintf("X-Pad: a\x00\r\nContent-Length: %d\r\n\r\n", len(smuggled)) + smuggled,
	}
	for name, attack := range attacks {
		t.Run(name, func(t *testing.T) {
			// The attack, then an honest request on the same connection.
			exchangeRaw(t, b.addrs.HTTP, attack+"GET /next HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		})
	}
	mu.Lock()
	for _, s := range seen {
		if strings.Contains(s, "6.6.6.6") {
			t.Errorf("the backend received a request the gateway did not read as one; all it received: %q", seen)
			break
		}
	}
	seen = nil
	mu.Unlock()

	t.Run("both Content-Length and Transfer-Encoding: 400 and the connection closed", func(t *testing.T) {
		got := exchangeRaw(t, b.addrs.HTTP, attacks["CL.TE"]+"GET /next HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		if !strings.HasPrefix(got, "HTTP/1.1 400 ") || strings.Count(got, "HTTP/1.1 ") != 1 {
			t.Fatalf("got %q, want one 400 answer", got)
		}
	})

	t.Run("control: the request sent openly is read as one", func(t *testing.T) {
		exchangeRaw(t, b.addrs.HTTP, "GET /first HTTP/1.1\r\nHost: "+host+"\r\n\r\n"+smuggled)
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 2 || seen[1] != "GET /smuggled xff=127.0.0.1" {
			t.Fatalf("backend received %q, want /first and /smuggled with the gateway's X-Forwarded-For", seen)
		}
	})
}

// exchangeRaw writes raw to the gateway and reads whatever comes back
// until the gateway closes the connection or stays silent for a while.
func exchangeRaw(t *testing.T, addr, raw string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	buf := make([]byte, 4096)
	for {
		conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := conn.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			return got.String()
		}
	}
}
