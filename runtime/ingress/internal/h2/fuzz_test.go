package h2

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// FuzzServeConn feeds arbitrary bytes after the client preface to a
// server connection: it must neither panic nor hang (ServeConn returns
// once the bytes are read and the handlers are done).
func FuzzServeConn(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	srv := &Server{Handler: echo, Log: slog.New(slog.DiscardHandler), MaxStreams: 4, MaxReadFrameSize: 16 << 10,
		MaxHeaderListSize: 4 << 10, Window: 64 << 10, PrefaceTimeout: time.Second, IdleTimeout: time.Second}
	f.Fuzz(func(t *testing.T, frames []byte) {
		in := append([]byte(http2.ClientPreface), frames...)
		srv.ServeConn(&bytesConn{r: bytes.NewReader(in)}, context.Background())
	})
}

// fuzzSeeds are frame sequences a client sends: settings, a GET, a POST
// with a body, a PING, window updates, a reset, trailers.
func fuzzSeeds() [][]byte {
	var out bytes.Buffer
	fr := http2.NewFramer(&out, nil)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	block := func(fields ...string) []byte {
		hb.Reset()
		for i := 0; i < len(fields); i += 2 {
			enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
		}
		return append([]byte(nil), hb.Bytes()...)
	}
	take := func() []byte { b := append([]byte(nil), out.Bytes()...); out.Reset(); return b }
	var seeds [][]byte
	fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10})
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":method", "GET", ":scheme", "https", ":path", "/", ":authority", "a.test"), EndStream: true, EndHeaders: true})
	fr.WriteWindowUpdate(1, 100)
	seeds = append(seeds, take())
	fr.WriteSettings()
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":method", "POST", ":scheme", "https", ":path", "/p", ":authority", "a.test", "content-length", "3"), EndHeaders: true})
	fr.WriteData(1, false, []byte("ab"))
	fr.WriteData(1, true, []byte("c"))
	fr.WritePing(false, [8]byte{1})
	seeds = append(seeds, take())
	fr.WriteSettings()
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block(":method", "POST", ":scheme", "https", ":path", "/", ":authority", "a.test")[:3]})
	fr.WriteContinuation(3, true, block("x-a", "b"))
	fr.WriteRSTStream(3, http2.ErrCodeCancel)
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: block(":method", "POST", ":scheme", "https", ":path", "/", ":authority", "a.test"), EndHeaders: true})
	fr.WriteData(5, false, []byte("x"))
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: block("x-trailer", "1"), EndStream: true, EndHeaders: true})
	fr.WriteGoAway(0, http2.ErrCodeNo, nil)
	seeds = append(seeds, take())
	return seeds
}

// bytesConn is a connection that reads r and drops what is written.
type bytesConn struct{ r io.Reader }

func (c *bytesConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *bytesConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *bytesConn) Close() error                     { return nil }
func (c *bytesConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *bytesConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (c *bytesConn) SetDeadline(time.Time) error      { return nil }
func (c *bytesConn) SetReadDeadline(time.Time) error  { return nil }
func (c *bytesConn) SetWriteDeadline(time.Time) error { return nil }

var _ http.Handler = echo
