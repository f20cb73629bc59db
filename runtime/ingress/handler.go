package ingress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// The http.Handler side of the gateway: the HTTP/2 server (internal/h2,
// server.go) serves HTTP/2 with the Proxy as its handler, which also
// serves requests of other http.Servers (Handler, in tests). The handler routes the
// request, answers what the gateway answers itself, and forwards the rest
// with the forwarding core's rules (forward.go) on the backend pool
// (transport.go).

// connInfo is what the handler knows of a request's connection.
type connInfo struct {
	kind Listener
	peer netip.Addr
}

type connInfoKey struct{}

// connContext is the server's ConnContext: it records c's connInfo.
func connContext(ctx context.Context, c net.Conn) context.Context {
	ci := &connInfo{kind: ListenerHTTPS}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		ci.peer = ap.Addr().Unmap()
	}
	return context.WithValue(ctx, connInfoKey{}, ci)
}

// Handler returns p as the handler of requests that arrived on a listener
// of kind l, for an http.Server other than the gateway's own (tests).
func (p *Proxy) Handler(l Listener) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ci := &connInfo{kind: l}
		if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
			ci.peer = ap.Addr().Unmap()
		}
		p.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), connInfoKey{}, ci)))
	})
}

// ServeHTTP serves a request of the gateway's server (server.go), or of
// Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ci, _ := r.Context().Value(connInfoKey{}).(*connInfo)
	if ci == nil {
		// Served outside server.go (tests with httptest): the peer from
		// the request, as plain HTTP.
		ci = &connInfo{kind: ListenerHTTP}
		if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
			ci.peer = ap.Addr().Unmap()
		}
	}
	if ci.kind == ListenerHTTP && p.acme != nil && strings.HasPrefix(r.URL.Path, acmeChallengePrefix) && p.acme.HandleHTTPChallenge(w, r) {
		return
	}
	uri := originForm(r.RequestURI)
	route := p.Lookup(ci.kind, r.Host)
	if stats := p.stats(route); stats != nil {
		start, status := time.Now(), statusClientGone
		// Deferred: a request the handler aborts counts too.
		defer func() { stats.Observe(status, time.Since(start)) }()
		status = p.serve(w, r, ci, route, uri)
		return
	}
	p.serve(w, r, ci, route, uri)
}

// statusClientGone is what the metrics record for a request whose client
// went away before it was answered (as nginx logs it).
const statusClientGone = 499

// serve answers r itself or forwards it, and returns the status.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, ci *connInfo, route *Route, uri string) int {
	rep, proxy := decide(p, ci.kind, route, r.Host, uri)
	if proxy {
		return p.forward(w, r, ci, route, uri)
	}
	answer(w, r, rep, !bodyRead(r))
	return rep.status
}

// answer writes the gateway's own answer to r. On HTTP/1, a body left
// unread ends the connection: net/http neither waits for the rest of it
// (which a client could hold back forever) nor ever reads it as the next
// request. (On HTTP/2 the stream alone ends.)
func answer(w http.ResponseWriter, r *http.Request, rep reply, unread bool) {
	if r.ProtoMajor == 1 && unread {
		rep.close = true
		// net/http reads what is left of a body (up to 256 KiB) before
		// it answers, to keep the connection; this makes that read fail
		// at once, and net/http close the connection after the answer.
		http.NewResponseController(w).SetReadDeadline(aLongTimeAgo)
	}
	rep.write(w, rep.close && r.ProtoMajor == 1)
}

// bodyRead says whether r has no body left to read. An answer the gateway
// gives without reading a body ends the connection (net/http reads up to
// 256 KiB of what is left to keep it, otherwise closes it): what follows
// the head is never read as a request.
func bodyRead(r *http.Request) bool {
	return r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0
}

// originForm returns a request target in origin form: an absolute-form
// target's path and query ("/" without a path). HTTP/2 sends the origin
// form.
func originForm(target string) string {
	if strings.HasPrefix(target, "/") || target == "*" {
		return target
	}
	if _, rest, ok := strings.Cut(target, "://"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return rest[i:]
		}
	}
	return "/"
}

// forward sends r to route's backend and copies the response to w; it
// returns the status for the metrics.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, ci *connInfo, route *Route, uri string) int {
	if p.limits.bodyTooLarge(r.ContentLength) {
		answer(w, r, refusalReply(http.StatusRequestEntityTooLarge), true)
		return http.StatusRequestEntityTooLarge
	}
	o := &outgoing{ctx: r.Context(), req: r, timeouts: route.Timeouts}
	buf := getBuffer()
	defer putBuffer(buf)
	fw := forwarding{peer: ci.peer, https: ci.kind == ListenerHTTPS}
	if p.limits.trusts(ci.peer) {
		fw.limits = &p.limits
	}
	o.head, o.idempotent = appendRequestHead((*buf)[:0], r, &fw, uri)
	if !bodyRead(r) {
		body := &clientBody{r: r.Body, rc: http.NewResponseController(w), idle: p.limits.bodyIdle()}
		if max := p.limits.maxBody(); max >= 0 {
			body.r = http.MaxBytesReader(w, r.Body, max)
		}
		if n := r.ContentLength; n > 0 && n <= maxBufferedRequestBody {
			// Held in memory, the request can go to another task when
			// the first fails.
			o.body = make([]byte, n)
			if _, err := io.ReadFull(body, o.body); err != nil {
				return p.bodyFailed(w, r, err)
			}
			// Read whole: net/http's next reads have deadlines of their
			// own.
			body.rc.SetReadDeadline(time.Time{})
			o.head = appendFraming(o.head, n)
		} else {
			o.stream, o.chunked = body, n < 0
			o.head = appendFraming(o.head, n)
		}
	} else if sendsLength(r.Method) {
		o.head = appendFraming(o.head, 0)
	}
	o.head = append(o.head, "\r\n"...)
	if cap(o.head) > cap(*buf) {
		*buf = o.head[:0]
	}
	fl, err := p.upstream(route).roundTrip(o)
	var resp *http.Response
	if err == nil {
		if status, done := fl.writeFramed(w, o, buf); done {
			return status
		}
		o.informational = func(resp *http.Response) {
			copyResponseHeader(w.Header(), resp.Header)
			w.WriteHeader(resp.StatusCode)
			clear(w.Header())
		}
		resp, err = fl.response(o)
	}
	if err != nil {
		var body *clientBodyError
		if errors.As(err, &body) {
			return p.bodyFailed(w, r, body.err)
		}
		if r.Context().Err() != nil {
			// The client went away: nobody to answer, and net/http must
			// not answer in the handler's place (an empty 200).
			panic(http.ErrAbortHandler)
		}
		rep := failureReply(err)
		p.log.Warn("proxy request failed", "host", r.Host, "path", r.URL.Path, "status", rep.status, "err", err)
		answer(w, r, rep, o.stream != nil && !o.stream.eof)
		return rep.status
	}
	defer resp.Body.Close()
	copyResponse(w, resp, buf)
	return resp.StatusCode
}

// bodyFailed answers a request whose body could not be read
// (bodyFailureStatus). (A read error cancels the request's context, so a
// client that is still there and one that went away look alike: both are
// answered.)
func (p *Proxy) bodyFailed(w http.ResponseWriter, r *http.Request, err error) int {
	status := bodyFailureStatus(err)
	answer(w, r, refusalReply(status), true)
	return status
}

// sendsLength says whether a request of this method without a body still
// says Content-Length: 0, as http.Transport does.
func sendsLength(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

// appendRequestHead appends the request line and fields the backend gets
// (without framing fields and the final empty line) and reports whether
// the request is idempotent. Host is the host that routed the request.
func appendRequestHead(b []byte, r *http.Request, fw *forwarding, uri string) ([]byte, bool) {
	idempotent := isIdempotent(r.Method)
	b = append(b, r.Method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, r.Host...)
	b = append(b, "\r\n"...)
	named := connectionOptions(r.Header["Connection"])
	for name, values := range r.Header {
		switch rule := requestFieldRule(name, fw.limits != nil); {
		case rule == fieldDrop || isFramingField(name):
			continue
		case rule != fieldPass:
			for _, v := range values {
				fw.note(rule, []byte(v))
			}
			continue
		case named != nil && containsFold(named, name):
			continue
		case isIdempotencyKey(name):
			idempotent = true
		}
		for _, v := range values {
			b = append(b, name...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	return appendForwarding(b, fw, r.Host), idempotent
}

// appendFraming appends the body's framing: its length, or chunked for a
// length not known (-1).
func appendFraming(b []byte, n int64) []byte {
	if n < 0 {
		return append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, "\r\n"...)
}

// copyResponseHeader copies a backend's header fields for the client:
// all but the hop-by-hop ones and those its Connection field names.
func copyResponseHeader(dst, src http.Header) {
	named := connectionOptions(src["Connection"])
	for name, values := range src {
		if isHopField(name) || named != nil && containsFold(named, name) {
			continue
		}
		dst[name] = values
	}
}

// connectionOptions returns the field names a Connection field lists
// (besides close and keep-alive, and never a framing field), nil for
// none: those fields are hop-by-hop too.
func connectionOptions(values []string) []string {
	var named []string
	for _, v := range values {
		for opt := range strings.SplitSeq(v, ",") {
			opt = strings.TrimSpace(opt)
			if opt == "" || foldEqual(opt, "close") || foldEqual(opt, "keep-alive") || isFramingField(opt) {
				continue
			}
			named = append(named, opt)
		}
	}
	return named
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// copyResponse writes resp to w: the head, then the body as it comes,
// flushed write by write when it is a stream (no length, or server-sent
// events), and the trailers. A body that breaks off (the backend died
// mid-chunk) aborts the response: the client's connection (or HTTP/2
// stream) is reset rather than the response ended as if whole.
func copyResponse(w http.ResponseWriter, resp *http.Response, buf *[]byte) {
	h := w.Header()
	copyResponseHeader(h, resp.Header)
	for name := range resp.Trailer {
		h.Add("Trailer", name)
	}
	w.WriteHeader(resp.StatusCode)
	stream := resp.ContentLength < 0 || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	flusher, _ := w.(http.Flusher)
	for {
		n, rerr := resp.Body.Read(*buf)
		if n > 0 {
			if _, err := w.Write((*buf)[:n]); err != nil {
				// The client went away: the backend connection closes
				// with the body unread.
				return
			}
			if stream && flusher != nil {
				flusher.Flush()
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			panic(http.ErrAbortHandler)
		}
	}
	for name, values := range resp.Trailer {
		h[name] = values
	}
}
