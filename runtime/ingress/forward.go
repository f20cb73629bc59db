package ingress

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// The forwarding core: every rule about what passes between a client and
// a backend, in one place for both ways a request is served — by an event
// loop (loop.go, loopproxy.go), by the goroutine HTTP/1 server (conn.go) or
// as an http.Handler for HTTP/2 (handler.go, transport.go).
// Each rule exists once: the timeouts and limits, which header fields are
// the connection's own (hop-by-hop) or replaced by the gateway, the
// X-Forwarded-* and X-Real-IP fields the backend gets, which requests may
// be sent again after a failure, and the answers the gateway gives itself.

// The gateway's timeouts. A route may set its own connect and
// response-header timeouts (Timeouts in table.go).
const (
	// clientHeadTimeout bounds receiving a request head, from its first
	// byte (nginx's client_header_timeout is 60 s; a head is one packet).
	clientHeadTimeout = 10 * time.Second
	// clientIdleTimeout closes a client connection idle between requests.
	clientIdleTimeout = 2 * time.Minute
	// backendIdleTimeout closes a pooled backend connection unused this
	// long (backends commonly drop idle ones after 60-120 s).
	backendIdleTimeout = 50 * time.Second
	// backendKeepAlive is the TCP keep-alive period of backend connections.
	backendKeepAlive = 30 * time.Second
	// tlsHandshakeTimeout bounds a TLS handshake.
	tlsHandshakeTimeout = 10 * time.Second
	// shutdownTimeout is how long requests in flight may finish once the
	// gateway is asked to stop.
	shutdownTimeout = 10 * time.Second
	// lingerTimeout bounds how long a refused client's connection is read
	// and dropped after the answer (nginx's lingering_timeout).
	lingerTimeout = 2 * time.Second
)

// The gateway's sizes.
const (
	// maxHeaderBytes bounds a request's (and a response's) head.
	maxHeaderBytes = 16 << 10
	// maxBufferedRequestBody is the longest request body held in memory
	// before it is sent (so the request can go to another task when the
	// first fails); longer and chunked bodies stream.
	maxBufferedRequestBody = 8 << 10
	// maxIdlePerEndpoint bounds the idle connections pooled per task.
	maxIdlePerEndpoint = 512
	// acmeChallengePrefix is where ACME HTTP-01 challenges are asked.
	acmeChallengePrefix = "/.well-known/acme-challenge/"
)

// Defaults of Limits.
const (
	// DefaultMaxBodyBytes is 100 MiB: nginx's 1 MiB default refuses the
	// uploads of ordinary applications (images, documents, imports), and
	// a PaaS user expects those to work without a setting; larger ones
	// (backups, videos) are what the setting is for.
	DefaultMaxBodyBytes = 100 << 20
	// DefaultBodyIdleTimeout is nginx's client_body_timeout: a client
	// that sends nothing of its body for a minute has gone.
	DefaultBodyIdleTimeout = 60 * time.Second
	// DefaultSendTimeout is nginx's send_timeout: a client that takes
	// nothing of a response for a minute has stopped reading.
	DefaultSendTimeout = 60 * time.Second
)

// Limits are the operator's settings ([ingress] in the daemon's
// configuration) for every request.
type Limits struct {
	// MaxBodyBytes bounds a request body: a longer one is answered 413
	// and the connection closed. Zero means DefaultMaxBodyBytes, a
	// negative value no limit.
	MaxBodyBytes int64
	// BodyIdleTimeout cuts off a client that sends nothing of its request
	// body for this long (408, connection closed, the backend connection
	// released). Zero means DefaultBodyIdleTimeout.
	BodyIdleTimeout time.Duration
	// SendTimeout cuts off a client that takes nothing of a response for
	// this long: a write that makes no progress for it closes the
	// client's connection (over HTTP/2 the whole connection, whose writer
	// is shared) and the backend's, which is never reused. Zero means
	// DefaultSendTimeout.
	SendTimeout time.Duration
	// TrustedProxies are the peers (proxies in front of the gateway) whose
	// forwarding fields are believed: their X-Forwarded-For is appended
	// to, their X-Forwarded-Proto and other X-Forwarded-* fields pass.
	// From every other peer those fields are replaced.
	TrustedProxies []netip.Prefix
}

func (l *Limits) maxBody() int64 {
	switch {
	case l.MaxBodyBytes == 0:
		return DefaultMaxBodyBytes
	case l.MaxBodyBytes < 0:
		return -1
	}
	return l.MaxBodyBytes
}

// bodyTooLarge says whether a body of n bytes (-1: not known yet) is over
// the limit.
func (l *Limits) bodyTooLarge(n int64) bool {
	max := l.maxBody()
	return max >= 0 && n > max
}

func (l *Limits) bodyIdle() time.Duration {
	if l.BodyIdleTimeout <= 0 {
		return DefaultBodyIdleTimeout
	}
	return l.BodyIdleTimeout
}

func (l *Limits) send() time.Duration {
	if l.SendTimeout <= 0 {
		return DefaultSendTimeout
	}
	return l.SendTimeout
}

// trusts says whether peer is a trusted proxy.
func (l *Limits) trusts(peer netip.Addr) bool {
	for _, p := range l.TrustedProxies {
		if p.Contains(peer) {
			return true
		}
	}
	return false
}

// text is what both a string and a byte slice can be: header names and
// values come as strings from net/http and as bytes from the event loops.
type text interface{ ~string | ~[]byte }

// foldEqual reports whether s equals the lower-case ASCII name in any case.
func foldEqual[T text](s T, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasFoldPrefix reports whether s starts with the lower-case prefix.
func hasFoldPrefix[T text](s T, lower string) bool {
	return len(s) >= len(lower) && foldEqual(s[:len(lower)], lower)
}

// isHopField says whether a header field concerns one connection only
// and never passes the gateway (RFC 9110 7.6.1). Fields a Connection
// field names are hop-by-hop too (namedByConnection).
func isHopField[T text](name T) bool {
	switch len(name) {
	case 2:
		return foldEqual(name, "te")
	case 7:
		return foldEqual(name, "trailer") || foldEqual(name, "upgrade")
	case 10:
		return foldEqual(name, "connection") || foldEqual(name, "keep-alive")
	case 16:
		return foldEqual(name, "proxy-connection")
	case 18:
		return foldEqual(name, "proxy-authenticate")
	case 19:
		return foldEqual(name, "proxy-authorization")
	}
	return false
}

// isFramingField says whether a field frames the message: a Connection
// field naming it never removes it.
func isFramingField[T text](name T) bool {
	return foldEqual(name, "content-length") || foldEqual(name, "transfer-encoding") || foldEqual(name, "host")
}

// isForwardingField says whether a field tells where a request came from
// or how it reached the gateway: Forwarded, X-Forwarded-*, X-Real-IP and
// their look-alikes, which applications and frameworks believe.
func isForwardingField[T text](name T) bool {
	if hasFoldPrefix(name, "x-forwarded-") {
		return true
	}
	switch len(name) {
	case 9:
		return foldEqual(name, "forwarded") || foldEqual(name, "x-real-ip")
	case 11:
		return foldEqual(name, "x-client-ip")
	case 14:
		return foldEqual(name, "true-client-ip")
	case 16:
		return foldEqual(name, "cf-connecting-ip") || foldEqual(name, "fastly-client-ip")
	case 19:
		return foldEqual(name, "x-cluster-client-ip")
	case 24:
		return foldEqual(name, "x-original-forwarded-for")
	}
	return false
}

// fieldRule is what becomes of a client's request header field.
type fieldRule uint8

const (
	// fieldPass: the field goes to the backend as it is.
	fieldPass fieldRule = iota
	// fieldDrop: hop-by-hop, answered by the gateway (Expect), or a
	// forwarding field the gateway replaces.
	fieldDrop
	// fieldPriorFor: a trusted proxy's X-Forwarded-For, appended to.
	fieldPriorFor
	// fieldPriorProto: a trusted proxy's X-Forwarded-Proto, kept when it
	// says http or https.
	fieldPriorProto
)

// requestFieldRule says what becomes of a request header field from a
// peer trusted or not. The gateway always sets X-Forwarded-Host (the
// host that routed the request) and X-Real-IP itself.
func requestFieldRule[T text](name T, trusted bool) fieldRule {
	switch {
	case isHopField(name) || foldEqual(name, "expect"):
		// The gateway answers 100-continue itself (net/http) or never
		// needs to (the loops read the whole body first).
		return fieldDrop
	case !isForwardingField(name):
		return fieldPass
	case !trusted || foldEqual(name, "x-forwarded-host") || foldEqual(name, "x-real-ip"):
		return fieldDrop
	case foldEqual(name, "x-forwarded-for"):
		return fieldPriorFor
	case foldEqual(name, "x-forwarded-proto"):
		return fieldPriorProto
	}
	return fieldPass
}

// forwarding is what the gateway tells a backend about a request's
// origin: X-Forwarded-For, -Host, -Proto and X-Real-IP.
type forwarding struct {
	peer  netip.Addr
	https bool
	// limits is set when peer is a trusted proxy.
	limits *Limits
	// From a trusted peer: its X-Forwarded-For values (joined with ", ")
	// and its X-Forwarded-Proto.
	priorFor   []byte
	priorProto []byte
}

// note takes a field requestFieldRule classed as prior.
func (f *forwarding) note(rule fieldRule, value []byte) {
	switch rule {
	case fieldPriorFor:
		if len(f.priorFor) > 0 {
			f.priorFor = append(f.priorFor, ", "...)
		}
		f.priorFor = append(f.priorFor, value...)
	case fieldPriorProto:
		f.priorProto = append(f.priorProto[:0], value...)
	}
}

// appendField appends a header field.
func appendField(b, name, value []byte) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

// appendForwarding appends the forwarding fields for a request routed by
// host.
func appendForwarding[T text](b []byte, f *forwarding, host T) []byte {
	b = append(b, "X-Forwarded-For: "...)
	if len(f.priorFor) > 0 {
		b = append(b, f.priorFor...)
		b = append(b, ", "...)
	}
	b = f.peer.AppendTo(b)
	b = append(b, "\r\nX-Forwarded-Host: "...)
	b = append(b, host...)
	b = append(b, "\r\nX-Forwarded-Proto: "...)
	b = append(b, f.proto()...)
	b = append(b, "\r\nX-Real-IP: "...)
	b = f.client().AppendTo(b)
	return append(b, "\r\n"...)
}

func (f *forwarding) proto() string {
	switch {
	case len(f.priorProto) > 0 && foldEqual(f.priorProto, "https"):
		return "https"
	case len(f.priorProto) > 0 && foldEqual(f.priorProto, "http"):
		return "http"
	case f.https:
		return "https"
	}
	return "http"
}

// client is the address X-Real-IP names: the peer, or behind trusted
// proxies the last address of X-Forwarded-For that is not a trusted
// proxy itself (as nginx's real_ip_recursive), parsed as an address.
func (f *forwarding) client() netip.Addr {
	addr := f.peer
	if f.limits == nil {
		return addr
	}
	for rest := f.priorFor; len(rest) > 0; {
		i := bytes.LastIndexByte(rest, ',')
		a, err := netip.ParseAddr(string(bytes.TrimSpace(rest[i+1:])))
		if err != nil {
			break
		}
		addr = a.Unmap()
		if !f.limits.trusts(addr) {
			break
		}
		rest = rest[:max(i, 0)]
	}
	return addr
}

// isIdempotent says whether a request may be sent again after an attempt
// that got no answer: its method is safe (RFC 9110 9.2.1) or it carries
// an idempotency key (hasIdempotencyKey).
func isIdempotent[T text](method T) bool {
	switch string(method) {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// isIdempotencyKey says whether a field marks its request as safe to send
// again (draft-ietf-httpapi-idempotency-key-header).
func isIdempotencyKey[T text](name T) bool {
	return foldEqual(name, "idempotency-key") || foldEqual(name, "x-idempotency-key")
}

// The bounds of sending a request again: to other tasks after failures,
// and to fresh connections after pooled ones the backend had closed.
const (
	maxAttempts     = 3
	maxStaleRetries = 2
)

// failure is how one attempt of a request on one backend connection
// failed.
type failure struct {
	err error
	// dialFailed: no connection was made, so nothing was sent.
	dialFailed bool
	// stale: the connection was pooled and ended before any byte of an
	// answer, as one the backend closed while idle does, and a fresh
	// connection may still be tried (maxStaleRetries).
	stale bool
	// answered: part of a response arrived.
	answered bool
	// bodyTaken: part of a streamed request body was read from the
	// client, which cannot send it again.
	bodyTaken  bool
	idempotent bool
}

// retry is what becomes of a request after a failure.
type retry uint8

const (
	retryNone retry = iota
	// retryFresh: again on a fresh connection (to any task).
	retryFresh
	// retryOther: again on another task.
	retryOther
)

// next decides whether the request goes again: never once an answer
// began, a streamed body was taken or the backend timed out; on another
// task after a failed connection, or for an idempotent request; on a
// fresh connection after a stale pooled one (the request never reached
// the application).
func (f failure) next() retry {
	switch {
	case f.answered || f.bodyTaken || isTimeout(f.err) && !f.dialFailed:
		return retryNone
	case f.dialFailed:
		return retryOther
	case f.stale:
		return retryFresh
	case f.idempotent:
		return retryOther
	}
	return retryNone
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

var (
	errNoBackend             = errors.New("no running backend for this route")
	errDialTimeout           = timeoutError("connect timeout")
	errResponseHeaderTimeout = timeoutError("timeout awaiting response headers")
	errUnaskedUpgrade        = errors.New("backend switched protocols unasked")
)

type timeoutError string

func (e timeoutError) Error() string { return string(e) }
func (e timeoutError) Timeout() bool { return true }

// bodyFailureStatus is the answer to a request whose body could not be
// read: 413 beyond the limit, 408 when the client stopped sending, 400
// otherwise (a malformed chunk, a body cut short).
func bodyFailureStatus(err error) int {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case isTimeout(err):
		return http.StatusRequestTimeout
	}
	return http.StatusBadRequest
}

// reply is an answer the gateway gives itself, as plain text.
type reply struct {
	status   int
	text     string
	location string
	// close: the connection ends after it (a refused head, a body not
	// read).
	close bool
}

func notFoundReply() reply {
	return reply{status: http.StatusNotFound, text: "404 not found: no application is routed at this address\n"}
}

func redirectReply(status int, to string) reply {
	return reply{status: status, text: "Redirecting to " + to + "\n", location: to}
}

// failureReply answers a request no backend answered: 504 when it timed
// out, 502 otherwise.
func failureReply(err error) reply {
	status := http.StatusBadGateway
	if isTimeout(err) {
		status = http.StatusGatewayTimeout
	}
	return reply{status: status, text: http.StatusText(status) + ": the application did not answer\n"}
}

// refusalReply answers a request the gateway will not pass on (a head
// the strict parser refused, a body too large or too slow), after which
// the connection closes.
func refusalReply(status int) reply {
	return reply{status: status, text: strconv.Itoa(status) + " " + http.StatusText(status) + "\n", close: true}
}

// appendTo appends the whole response; closing adds Connection: close.
func (r reply) appendTo(out []byte, closing bool) []byte {
	out = append(out, "HTTP/1.1 "...)
	out = strconv.AppendInt(out, int64(r.status), 10)
	out = append(out, ' ')
	out = append(out, http.StatusText(r.status)...)
	out = append(out, "\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(r.text)), 10)
	if r.location != "" {
		out = append(out, "\r\nLocation: "...)
		out = append(out, r.location...)
	}
	if closing || r.close {
		out = append(out, "\r\nConnection: close"...)
	}
	out = append(out, "\r\n\r\n"...)
	return append(out, r.text...)
}

// write answers through net/http; closing (or r.close, on HTTP/1) ends
// the connection after it.
func (r reply) write(w http.ResponseWriter, closing bool) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(r.text)))
	if r.location != "" {
		h.Set("Location", r.location)
	}
	if closing {
		h.Set("Connection", "close")
	}
	w.WriteHeader(r.status)
	io.WriteString(w, r.text)
}
