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
)

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
}

// Request is a parsed request head.
type Request struct {
	Message
	Method, Target []byte
	// Host is the Host field's value; a request with more than one is
	// malformed.
	Host    []byte
	HasHost bool
	// RequestLineLen is the length of the request line with its CRLF.
	RequestLineLen int
}

// Response is a parsed response head.
type Response struct {
	Message
	Status int
	// StatusLineLen is the length of the status line with its CRLF.
	StatusLineLen int
}

// ParseRequest parses the request head at the start of b into r (whose
// Fields slice is reused). It returns ErrIncomplete when b holds no whole
// head yet and at most max bytes.
func ParseRequest(b []byte, max int, r *Request) error {
	end, err := headEnd(b, max)
	if err != nil {
		return err
	}
	line, rest, ok := cutLine(b[:end])
	if !ok {
		return ErrMalformed
	}
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 || !isToken(line[:sp1]) {
		return ErrMalformed
	}
	r.Method = line[:sp1]
	tail := line[sp1+1:]
	sp2 := bytes.IndexByte(tail, ' ')
	if sp2 <= 0 {
		return ErrMalformed
	}
	r.Target = tail[:sp2]
	if !validTarget(r.Method, r.Target) {
		return ErrMalformed
	}
	minor, ok := version(tail[sp2+1:])
	if !ok {
		return ErrMalformed
	}
	r.RequestLineLen = len(line) + 2
	r.Host, r.HasHost = nil, false
	if err := r.Message.parseFields(rest, minor); err != nil {
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
	r.HeadLen = end
	return nil
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

// validTarget accepts the origin form ("/path?query") and, for OPTIONS,
// the asterisk form: visible ASCII, no fragment, and every '%' starting an
// escape of two hex digits. The absolute form is left to the full server,
// as its authority overrides the Host field (RFC 9112 3.2.2) and net/http
// takes the host from it; so is an escape net/url would refuse.
func validTarget(method, t []byte) bool {
	if string(t) == "*" {
		return string(method) == "OPTIONS"
	}
	if len(t) == 0 || t[0] != '/' {
		return false
	}
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
