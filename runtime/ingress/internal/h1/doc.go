// Package h1 parses HTTP/1.1 message heads strictly, for the gateway
// (runtime/ingress): a request line or status line and its header fields,
// read in place from the bytes received so far, and the framing facts a
// proxy needs (Content-Length, Transfer-Encoding, the Connection options).
// It also finds where a chunked body ends (Chunked).
//
// Strict means that whatever two HTTP implementations could read
// differently is an error here — bare LF line ends, folded lines, spaces
// before the colon, control characters, a repeated or non-numeric
// Content-Length, Content-Length with Transfer-Encoding, a coding other
// than exactly chunked, a repeated Host or one with userinfo, a protocol
// other than HTTP/1.0 and HTTP/1.1 — and Status says what a server
// answers such a head with (400, 431, 501 or 505) before it closes the
// connection. Every HTTP/1 request the gateway serves is read by this
// parser alone; what it accepts, net/http reads the same way
// (FuzzParseRequest), so no backend or proxy reads it otherwise. That is
// what keeps request smuggling out.
//
// It imports nothing outside the standard library.
package h1
