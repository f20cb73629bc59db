// Package h2 is the gateway's HTTP/2 server (runtime/ingress): it serves
// the TLS connections that negotiate h2, one read loop per connection,
// each stream's request handed to an http.Handler on a goroutine that
// writes its response's HEADERS and DATA frames straight into the
// connection's buffered writer under a mutex, flushing once per response
// (or when a flow-control window or the buffer forces it). There is no
// writer goroutine and no goroutine per write, which is what net/http's
// HTTP/2 server spends most of its CPU on.
//
// Frames are read and written by golang.org/x/net/http2's Framer, which
// assembles CONTINUATION frames and bounds the header list
// (MaxHeaderListSize); header blocks are coded by
// golang.org/x/net/http2/hpack. The server keeps what net/http's enforces:
// the preface and SETTINGS exchange, bounds on PING, SETTINGS and other
// control-frame floods, on concurrent streams (REFUSED_STREAM), on
// handlers left running by reset streams (CVE-2023-44487, GOAWAY
// ENHANCE_YOUR_CALM) and on frames that carry nothing; flow control both
// ways; and the request rules of RFC 9113 8.2-8.3 (pseudo-header fields,
// no connection-specific fields, a Content-Length that matches the DATA),
// strictly enough that the request the gateway writes to its backend as
// HTTP/1.1 reads the same way (ValidHost, ValidPath and IsToken of
// internal/h1).
//
// A client that stops reading holds the writer: the read loop never waits
// for it (its answers are queued), but every stream's response does. The
// connection's own write deadline bounds that: the gateway hands ServeConn
// a connection whose writes fail after its send timeout without progress,
// and a failed write ends the connection, every stream with it.
//
// It imports nothing of the gateway but internal/h1.
package h2
