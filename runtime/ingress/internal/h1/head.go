package h1

import (
	"bytes"
	"errors"
)

var (
	// ErrIncomplete means the head has not ended yet: read more.
	ErrIncomplete = errors.New("h1: incomplete message head")
	// ErrTooLarge means the head is longer than the limit given.
	ErrTooLarge = errors.New("h1: message head too large")
	// ErrMalformed means the head breaks the grammar (or is ambiguous).
	ErrMalformed = errors.New("h1: malformed message head")
	// ErrVersion means a request names a protocol other than HTTP/1.0
	// and HTTP/1.1 (HTTP/2.0 on an HTTP/1 connection, FOO/9).
	ErrVersion = errors.New("h1: unsupported protocol version")
	// ErrCoding means a request's Transfer-Encoding is not exactly
	// chunked: a coding the gateway does not implement.
	ErrCoding = errors.New("h1: unsupported transfer coding")
)

// Status is the status a server answers a refused request head with
// (after which it closes the connection): 431 for a head too large, 505
// for an unsupported version, 501 for an unsupported transfer coding,
// and 400 for everything else.
func Status(err error) int {
	switch err {
	case ErrTooLarge:
		return 431
	case ErrVersion:
		return 505
	case ErrCoding:
		return 501
	}
	return 400
}

// Field is one header field, aliasing the parsed bytes; Value has no
// leading or trailing whitespace.
type Field struct {
	Name, Value []byte
}

// Message is what request and response heads share.
type Message struct {
	// Minor is the protocol's minor version: HTTP/1.<Minor>.
	Minor int
	// Fields are the header fields in order.
	Fields []Field
	// ContentLength is the Content-Length, or -1 without one.
	ContentLength int64
	// TransferEncoding says whether any Transfer-Encoding field is present;
	// Chunked, whether the last coding it lists is chunked.
	TransferEncoding bool
	Chunked          bool
	// Close says whether the Connection field asks to close after this
	// message (or HTTP/1.0 did not ask for keep-alive).
	Close bool
	// Options says whether Connection names anything but close and
	// keep-alive: header fields that must not be forwarded.
	Options bool
	// Upgrade and Expect say whether those fields are present.
	Upgrade, Expect bool
	// HeadLen is the length of the head, up to and with its empty line.
	HeadLen int

	// teFields counts the Transfer-Encoding fields; te is the last one's
	// value.
	teFields int
	te       []byte
}

// Request is a parsed request head.
type Request struct {
	Message
	Method, Target []byte
	// Host is the Host field's value; a request with more than one is
	// malformed.
	Host    []byte
	HasHost bool
	// Authority is the host (and port) of an absolute-form target
	// ("http://example.com/a"), nil for the origin and asterisk forms. It
	// overrides Host (RFC 9112 3.2.2), as in nginx and net/http.
	Authority []byte
	// Path is the target in origin form: Target itself, or the path and
	// query of an absolute-form target ("/" when it has none).
	Path []byte
	// RequestLineLen is the length of the request line with its CRLF.
	RequestLineLen int
}

// RoutingHost is the host the request is for: the absolute-form
// authority when there is one, otherwise the Host field.
func (r *Request) RoutingHost() []byte {
	if r.Authority != nil {
		return r.Authority
	}
	return r.Host
}

// ParseRequest parses the request head at the start of b into r (whose
// Fields slice is reused). It returns ErrIncomplete when b holds no whole
// head yet and at most max bytes. The request line is checked as soon as
// it is whole, so a bad one is refused before the rest of the head comes.
//
// Beyond the grammar it refuses, as nginx does, what two servers could
// frame or route differently: Transfer-Encoding with Content-Length, in
// HTTP/1.0, or repeated (400), a Transfer-Encoding other than exactly
// chunked (ErrCoding), an HTTP/1.1 request without exactly one Host, and
// a host with anything but a name, an address and a port (no userinfo).
func ParseRequest(b []byte, max int, r *Request) error {
	lf := bytes.IndexByte(b, '\n')
	switch {
	case lf < 0 && len(b) >= max, lf >= max:
		return ErrTooLarge
	case lf < 0:
		return ErrIncomplete
	case lf == 0 || b[lf-1] != '\r':
		return ErrMalformed
	}
	minor, err := r.parseRequestLine(b[:lf-1])
	if err != nil {
		return err
	}
	r.RequestLineLen = lf + 1
	end, err := headEnd(b, max)
	if err != nil {
		return err
	}
	r.Host, r.HasHost = nil, false
	if err := r.Message.parseFields(b[lf+1:end], minor); err != nil {
		return err
	}
	for _, f := range r.Fields {
		if equalFold(f.Name, "host") {
			if r.HasHost {
				return ErrMalformed
			}
			r.Host, r.HasHost = f.Value, true
		}
	}
	if minor == 1 && !r.HasHost || !validHost(r.Host) {
		return ErrMalformed
	}
	if r.TransferEncoding {
		switch {
		case minor == 0 || r.teFields > 1:
			return ErrMalformed
		case !equalFold(r.te, "chunked"):
			return ErrCoding
		case r.ContentLength >= 0:
			return ErrMalformed
		}
	}
	r.HeadLen = end
	return nil
}

// parseRequestLine reads method, target and version and returns the
// version's minor number.
func (r *Request) parseRequestLine(line []byte) (int, error) {
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 || !isToken(line[:sp1]) {
		return 0, ErrMalformed
	}
	r.Method = line[:sp1]
	tail := line[sp1+1:]
	sp2 := bytes.IndexByte(tail, ' ')
	if sp2 <= 0 {
		return 0, ErrMalformed
	}
	r.Target = tail[:sp2]
	minor, err := requestVersion(tail[sp2+1:])
	if err != nil {
		return 0, err
	}
	if !r.parseTarget() {
		return 0, ErrMalformed
	}
	return minor, nil
}

// requestVersion reads "HTTP/1.0" or "HTTP/1.1"; any other protocol
// written as name/version (HTTP/2.0, HTTP/1.2, FOO/9) is ErrVersion, and
// anything else malformed.
func requestVersion(b []byte) (int, error) {
	if minor, ok := version(b); ok {
		return minor, nil
	}
	slash := bytes.IndexByte(b, '/')
	if slash > 0 && isToken(b[:slash]) && isVersionNumber(b[slash+1:]) {
		return 0, ErrVersion
	}
	return 0, ErrMalformed
}

// isVersionNumber accepts 1*DIGIT [ "." 1*DIGIT ], up to 8 bytes.
func isVersionNumber(b []byte) bool {
	if len(b) == 0 || len(b) > 8 {
		return false
	}
	dot := bytes.IndexByte(b, '.')
	if dot < 0 {
		return allDigits(b)
	}
	return allDigits(b[:dot]) && allDigits(b[dot+1:])
}

func allDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var slash = []byte("/")

// parseTarget accepts the origin form ("/path?query"), for OPTIONS the
// asterisk form, and the absolute form with an http or https scheme and
// a host (no userinfo), whose path and query follow the origin form's
// rules; it sets Authority and Path.
func (r *Request) parseTarget() bool {
	t := r.Target
	r.Authority, r.Path = nil, t
	switch {
	case string(t) == "*":
		return string(r.Method) == "OPTIONS"
	case len(t) > 0 && t[0] == '/':
		return validPath(t)
	}
	rest, ok := cutScheme(t)
	if !ok {
		return false
	}
	end := bytes.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if len(authority) == 0 || !validHost(authority) {
		return false
	}
	r.Authority = authority
	switch path := rest[end:]; {
	case len(path) == 0:
		r.Path = slash
	case path[0] != '/':
		// "http://h?q" or a fragment: no origin form to forward as is.
		return false
	default:
		r.Path = path
		return validPath(path)
	}
	return true
}

// cutScheme removes "http://" or "https://" (in any case) from the start
// of t.
func cutScheme(t []byte) ([]byte, bool) {
	for _, scheme := range []string{"http://", "https://"} {
		if len(t) > len(scheme) && bytes.EqualFold(t[:len(scheme)], []byte(scheme)) {
			return t[len(scheme):], true
		}
	}
	return nil, false
}

// validPath accepts an origin-form target: visible ASCII, no fragment,
// and every '%' starting an escape of two hex digits (net/url would
// refuse anything else).
func validPath(t []byte) bool {
	for i, c := range t {
		switch {
		case c <= ' ' || c >= 0x7f || c == '#':
			return false
		case c == '%':
			if i+2 >= len(t) {
				return false
			}
			if _, ok := hexValue(t[i+1]); !ok {
				return false
			}
			if _, ok := hexValue(t[i+2]); !ok {
				return false
			}
		}
	}
	return true
}

// validHost accepts a host as the Host field or an authority carries it:
// a registered name or IPv4 address (letters, digits, '-', '.', '_', '~')
// or an IPv6 literal in brackets, then optionally ':' and port digits.
// Userinfo ('@'), escapes and every other delimiter are refused: nothing
// in a host may mean something else to the application than to the
// gateway. An empty host is valid (it routes nowhere).
func validHost(h []byte) bool {
	if len(h) > 0 && h[0] == '[' {
		end := bytes.IndexByte(h, ']')
		if end < 0 {
			return false
		}
		for _, c := range h[1:end] {
			if _, hex := hexValue(c); !hex && c != ':' && c != '.' {
				return false
			}
		}
		h = h[end+1:]
	} else {
		i := 0
		for i < len(h) && hostByte[h[i]] {
			i++
		}
		h = h[i:]
	}
	if len(h) == 0 {
		return true
	}
	if h[0] != ':' {
		return false
	}
	for _, c := range h[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var hostByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "-._~" {
		t[c] = true
	}
	return t
}()

// Response is a parsed response head.
type Response struct {
	Message
	Status int
	// StatusLineLen is the length of the status line with its CRLF.
	StatusLineLen int
}

// ParseResponse parses the response head at the start of b into r.
func ParseResponse(b []byte, max int, r *Response) error {
	end, err := headEnd(b, max)
	if err != nil {
		return err
	}
	line, rest, ok := cutLine(b[:end])
	if !ok || len(line) < len("HTTP/1.1 200") {
		return ErrMalformed
	}
	minor, ok := version(line[:8])
	if !ok || line[8] != ' ' {
		return ErrMalformed
	}
	status := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return ErrMalformed
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 || len(line) > 12 && line[12] != ' ' {
		return ErrMalformed
	}
	for _, c := range line[12:] {
		if !isFieldValueByte(c) {
			return ErrMalformed
		}
	}
	r.Status = status
	r.StatusLineLen = len(line) + 2
	if err := r.Message.parseFields(rest, minor); err != nil {
		return err
	}
	r.HeadLen = end
	return nil
}

// headEnd returns the length of the head at the start of b: up to and
// with the first empty line.
func headEnd(b []byte, max int) (int, error) {
	i := bytes.Index(b, crlfcrlf)
	if i < 0 {
		if hasBareLF(b) {
			// A head with bare LF line ends never ends in CRLF CRLF:
			// it is malformed, not incomplete.
			return 0, ErrMalformed
		}
		if len(b) >= max {
			return 0, ErrTooLarge
		}
		return 0, ErrIncomplete
	}
	if i+4 > max {
		return 0, ErrTooLarge
	}
	return i + 4, nil
}

var crlfcrlf = []byte("\r\n\r\n")

// hasBareLF says whether b has an LF without a CR before it.
func hasBareLF(b []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return false
		}
		if i+j == 0 || b[i+j-1] != '\r' {
			return true
		}
		i += j + 1
	}
}

// cutLine splits off the first CRLF-terminated line of b.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 1 || b[i-1] != '\r' {
		return nil, nil, false
	}
	return b[:i-1], b[i+1:], true
}

// version reads "HTTP/1.0" or "HTTP/1.1".
func version(b []byte) (int, bool) {
	if len(b) != 8 || string(b[:7]) != "HTTP/1." || (b[7] != '0' && b[7] != '1') {
		return 0, false
	}
	return int(b[7] - '0'), true
}

// parseFields parses the header fields (b ends with the head's final
// CRLF) and derives the framing facts.
func (m *Message) parseFields(b []byte, minor int) error {
	*m = Message{Minor: minor, Fields: m.Fields[:0], ContentLength: -1}
	keepAlive, closeAsked := false, false
	for {
		line, rest, ok := cutLine(b)
		if !ok {
			return ErrMalformed
		}
		b = rest
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			// Also a folded line (leading whitespace) and a space
			// before the colon.
			return ErrMalformed
		}
		value := line[colon+1:]
		for _, c := range value {
			if !isFieldValueByte(c) {
				return ErrMalformed
			}
		}
		f := Field{Name: line[:colon], Value: trimOWS(value)}
		m.Fields = append(m.Fields, f)
		switch {
		case equalFold(f.Name, "content-length"):
			if m.ContentLength >= 0 {
				return ErrMalformed
			}
			n, ok := parseLength(f.Value)
			if !ok {
				return ErrMalformed
			}
			m.ContentLength = n
		case equalFold(f.Name, "transfer-encoding"):
			m.TransferEncoding = true
			m.teFields++
			m.te = f.Value
			// Every field counts: the last coding of the last field.
			m.Chunked = lastCodingIsChunked(f.Value)
		case equalFold(f.Name, "connection"):
			for opt := range bytes.SplitSeq(f.Value, []byte(",")) {
				opt = trimOWS(opt)
				switch {
				case len(opt) == 0:
				case equalFold(opt, "close"):
					closeAsked = true
				case equalFold(opt, "keep-alive"):
					keepAlive = true
				default:
					m.Options = true
				}
			}
		case equalFold(f.Name, "upgrade"):
			m.Upgrade = true
		case equalFold(f.Name, "expect"):
			m.Expect = true
		}
	}
	m.Close = closeAsked || minor == 0 && !keepAlive
	return nil
}

// parseLength reads a Content-Length: decimal digits only, at most 18.
func parseLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func lastCodingIsChunked(v []byte) bool {
	if i := bytes.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return equalFold(trimOWS(v), "chunked")
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares b with a lower-case ASCII name, ignoring b's case.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// EqualFold reports whether b equals the lower-case ASCII name, in any
// case.
func EqualFold(b []byte, lower string) bool { return equalFold(b, lower) }

// isToken reports whether b is a token (RFC 9110 5.6.2).
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !tokenByte[c] {
			return false
		}
	}
	return true
}

// isFieldValueByte allows visible ASCII, space, tab and obs-text.
func isFieldValueByte(c byte) bool {
	return c == '\t' || c >= ' ' && c != 0x7f
}

var tokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// ValidHost reports whether h is a host the gateway routes by (validHost's
// rules): for an HTTP/2 request's :authority, read by the same rules as an
// HTTP/1 Host field.
func ValidHost(h []byte) bool { return validHost(h) }

// ValidPath reports whether t is an origin-form target the gateway passes
// on (validPath's rules): for an HTTP/2 request's :path.
func ValidPath(t []byte) bool { return len(t) > 0 && t[0] == '/' && validPath(t) }

// IsToken reports whether b is a token (RFC 9110 5.6.2): a method.
func IsToken(b []byte) bool { return isToken(b) }
