// Package h1 parses HTTP/1.1 message heads strictly, for the gateway's
// event loop (runtime/ingress, loop.go): a request line or status line and
// its header fields, read in place from the bytes received so far, and the
// framing facts a proxy needs (Content-Length, Transfer-Encoding, the
// Connection options). It also finds where a chunked body ends (Chunked).
//
// Strict means that whatever two HTTP implementations could read
// differently is an error here — bare LF line ends, folded lines, spaces
// before the colon, control characters, a repeated or non-numeric
// Content-Length, a repeated Host — so that the event loop passes on only
// requests whose meaning is certain and leaves everything else to a full
// HTTP server. That is what keeps request smuggling out.
package h1
