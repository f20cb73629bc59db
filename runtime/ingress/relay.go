package ingress

import (
	"bufio"
	"bytes"
	"net/http"
	"strconv"

	"github.com/slipwayhq/slipway/runtime/ingress/internal/h1"
)

// The raw HTTP/1 side of the forwarding core, shared by the event loops
// (loopproxy.go) and the goroutine HTTP/1 server (conn.go): both pass a
// request head and a response head on as bytes, rewritten by these rules,
// and bodies as they come, followed to their end by responseFraming.

// appendBackendHead appends the head a backend gets for r (parsed from
// raw) without the final empty line, and reports whether r is idempotent:
// the request line (in origin form), the client's fields but the
// hop-by-hop and forwarding ones (fw collects what it keeps of the
// latter), the Host that routed the request, and the gateway's
// forwarding fields. upgrade asks the backend to switch protocols as the
// client did. The framing fields pass as the client sent them (the strict
// parser checked them).
func appendBackendHead(b, raw []byte, r *h1.Request, fw *forwarding, upgrade bool) ([]byte, bool) {
	idempotent := isIdempotent(r.Method)
	if r.Authority == nil {
		b = append(b, raw[:r.RequestLineLen]...)
	} else {
		// The absolute form: its authority is the Host.
		b = append(b, r.Method...)
		b = append(b, ' ')
		b = append(b, r.Path...)
		b = append(b, " HTTP/1."...)
		b = strconv.AppendInt(b, int64(r.Minor), 10)
		b = append(b, "\r\nHost: "...)
		b = append(b, r.Authority...)
		b = append(b, "\r\n"...)
	}
	trusted := fw.limits != nil
	var upgradeTo []byte
	for _, f := range r.Fields {
		switch rule := requestFieldRule(f.Name, trusted); {
		case rule == fieldDrop:
			if upgrade && h1.EqualFold(f.Name, "upgrade") {
				upgradeTo = f.Value
			}
			continue
		case rule != fieldPass:
			fw.note(rule, f.Value)
			continue
		case r.Authority != nil && h1.EqualFold(f.Name, "host"):
			continue
		case r.Options && namedByConnection(r.Fields, f.Name):
			continue
		case isIdempotencyKey(f.Name):
			idempotent = true
		}
		b = appendField(b, f.Name, f.Value)
	}
	if upgradeTo != nil {
		b = append(b, "Connection: Upgrade\r\nUpgrade: "...)
		b = append(b, upgradeTo...)
		b = append(b, "\r\n"...)
	}
	return appendForwarding(b, fw, r.RoutingHost()), idempotent
}

// bodyFraming is how a response body ends.
type bodyFraming uint8

const (
	bodyNone bodyFraming = iota
	bodyLength
	bodyChunked
	bodyUntilClose
)

// responseFraming follows a response body through to its end.
type responseFraming struct {
	framing   bodyFraming
	remaining int64
	chunked   h1.Chunked
}

// bodyPart returns how much of p belongs to the response body and whether
// the body ends there.
func (f *responseFraming) bodyPart(p []byte) (int, bool, error) {
	switch f.framing {
	case bodyLength:
		n := int(min(int64(len(p)), f.remaining))
		f.remaining -= int64(n)
		return n, f.remaining == 0, nil
	case bodyChunked:
		return f.chunked.Scan(p)
	case bodyUntilClose:
		return len(p), false, nil
	}
	return 0, true, nil
}

// appendResponseHead appends the response head for the client, rewritten
// from the backend's (r, parsed from raw): as HTTP/1.1, without hop-by-hop
// fields (nor those its Connection field names), with Connection: close
// when the client's connection ends after it (closing, or a body that
// ends with the connection). head says the request was a HEAD. It returns
// the body's framing.
func appendResponseHead(out []byte, r *h1.Response, raw []byte, head, closing bool) ([]byte, responseFraming) {
	var f responseFraming
	switch {
	case head || r.Status == http.StatusNoContent || r.Status == http.StatusNotModified:
		f.framing = bodyNone
	case r.TransferEncoding && r.Chunked:
		f.framing = bodyChunked
	case r.TransferEncoding:
		f.framing = bodyUntilClose
	case r.ContentLength >= 0:
		f.framing, f.remaining = bodyLength, r.ContentLength
	default:
		f.framing = bodyUntilClose
	}
	out = append(out, "HTTP/1.1"...)
	out = append(out, raw[len("HTTP/1.1"):r.StatusLineLen]...)
	for _, fl := range r.Fields {
		switch {
		case isHopField(fl.Name):
			continue
		case r.TransferEncoding && h1.EqualFold(fl.Name, "content-length"):
			// Transfer-Encoding decides the framing (RFC 9112 6.3).
			continue
		case r.Options && namedByConnection(r.Fields, fl.Name):
			continue
		}
		out = appendField(out, fl.Name, fl.Value)
	}
	if closing || f.framing == bodyUntilClose {
		out = append(out, "Connection: close\r\n"...)
	}
	return append(out, "\r\n"...), f
}

// namedByConnection says whether a Connection field among fields names
// name, other than a framing field.
func namedByConnection(fields []h1.Field, name []byte) bool {
	if isFramingField(name) {
		return false
	}
	for _, f := range fields {
		if !h1.EqualFold(f.Name, "connection") {
			continue
		}
		for opt := range bytes.SplitSeq(f.Value, []byte(",")) {
			if bytes.EqualFold(bytes.TrimSpace(opt), name) {
				return true
			}
		}
	}
	return false
}

// readResponseHead reads the next response head from br into r and
// returns the bytes it spans (and what follows, as far as buffered),
// without consuming them.
func readResponseHead(br *bufio.Reader, r *h1.Response) ([]byte, error) {
	for {
		raw, _ := br.Peek(br.Buffered())
		switch err := h1.ParseResponse(raw, maxHeaderBytes, r); {
		case err == nil:
			return raw, nil
		case err != h1.ErrIncomplete:
			return nil, err
		case br.Buffered() >= br.Size():
			return nil, h1.ErrTooLarge
		}
		if _, err := br.Peek(br.Buffered() + 1); err != nil {
			return nil, err
		}
	}
}
