package ingress

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/slipwayhq/slipway/test/slowclient"
)

// The send timeout under test: a client that stops reading a response is
// cut off after it (one second here), on every server of the gateway.

// waitCutOff waits for the backend's /endless response to fail (its
// connection closed by the gateway), then for raw, the client's
// connection, to be closed by the gateway: what it holds is read to its
// end, which never comes while the gateway keeps it open.
func waitCutOff(t *testing.T, rec *recorder, raw net.Conn) {
	t.Helper()
	select {
	case err := <-rec.streamEnded:
		if err == nil {
			t.Fatal("the endless stream ended")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the backend of a client that reads nothing is still being read")
	}
	raw.SetReadDeadline(time.Now().Add(15 * time.Second))
	_, err := io.Copy(io.Discard, raw)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the gateway keeps the connection of a client that reads nothing")
	}
}

// requestNotReading sends request (over TLS when useTLS) on a connection
// from dialNotReading and returns its TCP connection.
func requestNotReading(t *testing.T, b *testBundle, useTLS bool, request string) net.Conn {
	t.Helper()
	addr := b.addrs.HTTP
	if useTLS {
		addr = b.addrs.HTTPS
	}
	raw := slowclient.Dial(t, addr)
	var conn net.Conn = raw
	if useTLS {
		tc := tls.Client(raw, &tls.Config{ServerName: "app.example.com", InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		conn = tc
	}
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestGateway_SendTimeoutHTTP1(t *testing.T) {
	t.Parallel()
	b, rec := desyncGateway(t, Limits{SendTimeout: time.Second})
	for _, tt := range []struct {
		name, request string
		tls           bool
	}{
		// The event loop, the goroutine server after a hand-over (an
		// HTTP/1.0 request), and over TLS.
		{"event loop", "GET /endless HTTP/1.1\r\nHost: app.example.com\r\n\r\n", false},
		{"handed over", "GET /endless HTTP/1.0\r\nHost: app.example.com\r\n\r\n", false},
		{"TLS", "GET /endless HTTP/1.1\r\nHost: app.example.com\r\n\r\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := requestNotReading(t, b, tt.tls, tt.request)
			// Another client is served meanwhile.
			if status, body, _ := get(t, b.addrs.HTTP, "app.example.com", "/other"); status != 200 || body != "GET /other 0" {
				t.Fatalf("another client got %d %q", status, body)
			}
			other, br := dialTLS(t, b.addrs.HTTPS, "app.example.com")
			if resp, body := rawExchange(t, br, other, "GET /other-tls HTTP/1.1\r\nHost: app.example.com\r\n\r\n"); resp.StatusCode != 200 || body != "GET /other-tls 0" {
				t.Fatalf("another TLS client got %d %q", resp.StatusCode, body)
			}
			waitCutOff(t, rec, raw)
		})
		t.Run(tt.name+" reading slowly", func(t *testing.T) {
			// A client that takes a little at a time, for three times
			// the send timeout: a slow download, never cut off.
			raw := requestNotReading(t, b, tt.tls, tt.request)
			buf := make([]byte, 1024)
			for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				raw.SetReadDeadline(time.Now().Add(15 * time.Second))
				if _, err := raw.Read(buf); err != nil {
					t.Fatalf("a client reading slowly was cut off: %v", err)
				}
			}
			select {
			case err := <-rec.streamEnded:
				t.Fatalf("the stream of a client reading slowly ended: %v", err)
			default:
			}
			raw.Close()
			if err := <-rec.streamEnded; err == nil {
				t.Fatal("the endless stream ended")
			}
		})
	}
}

func TestGateway_SendTimeoutHTTP2(t *testing.T) {
	t.Parallel()
	b, rec := desyncGateway(t, Limits{SendTimeout: time.Second})
	raw := slowclient.Dial(t, b.addrs.HTTPS)
	tc := tls.Client(raw, &tls.Config{ServerName: "app.example.com", InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err := tc.Handshake(); err != nil || tc.ConnectionState().NegotiatedProtocol != "h2" {
		t.Fatalf("handshake: %v, %q", err, tc.ConnectionState().NegotiatedProtocol)
	}
	// Windows as large as HTTP/2 allows: only TCP holds the server back.
	fr := http2.NewFramer(tc, nil)
	io.WriteString(tc, http2.ClientPreface)
	fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1})
	fr.WriteWindowUpdate(0, 1<<31-1-65535)
	var block strings.Builder
	enc := hpack.NewEncoder(&block)
	request := func(id uint32, path string) {
		block.Reset()
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":path", path}, {":authority", "app.example.com"}} {
			enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: []byte(block.String()), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	request(1, "/endless")
	// While stream 1's response holds the connection's writer, the read
	// loop goes on: PINGs (their answers queued, not waited for) and a
	// request on another stream, which reaches the backend.
	for i := range 50 {
		fr.WritePing(false, [8]byte{byte(i)})
	}
	request(3, "/beside")
	rec.waitRequest(t, "/beside")
	// Another connection is served meanwhile.
	h := dialH2(t, b.addrs.HTTPS)
	id := h.send("GET", "/other", nil, false, ":authority", "app.example.com")
	if f, body, _, reset := h.answer(id); reset || f[":status"] != "200" || body != "GET /other 0" {
		t.Fatalf("another connection got %v %q", f, body)
	}
	waitCutOff(t, rec, raw)
}
