package h1

// Chunked follows a chunked body (RFC 9112 7.1) as it passes through, to
// find where it ends; it does not decode it. The zero value is ready for
// a body's first byte.
type Chunked struct {
	state   chunkState
	size    int64 // of the chunk being read
	digits  int
	lineLen int   // of the size line, or of the trailer section, so far
	excess  int64 // size-line bytes beyond what the data allows
}

type chunkState uint8

const (
	chunkSize     chunkState = iota // hex digits
	chunkExt                        // after the size: extensions, up to CR
	chunkSizeLF                     // the LF after the size line's CR
	chunkData                       // size bytes
	chunkDataCR                     // the CR after the data
	chunkDataLF                     // its LF
	trailerStart                    // a trailer line or the final CRLF
	trailerName                     // a trailer field's name, up to ':'
	trailerLine                     // a trailer field's value, up to CR
	trailerLineLF                   // its LF
	finalLF                         // the LF of the final CRLF
	chunkDone
)

// The limits are net/http's (internal/chunked.go, transfer.go), so that
// a body that passes here also passes a Go backend:
const (
	// maxChunkLine bounds a size line without its CRLF: with the CRLF it
	// must fit a 4 KiB bufio.Reader.
	maxChunkLine = 4<<10 - 2
	// maxTrailers bounds the trailer section with its final CRLF.
	maxTrailers = 4 << 10
	// maxExcess bounds the size-line bytes beyond 16 per chunk plus twice
	// the chunk's size, summed over the body.
	maxExcess = 16 << 10
)

// Scan consumes p, the next bytes of the body. It returns how many belong
// to the body (all of p unless done) and whether the body ended, or
// ErrMalformed.
//
// Whitespace after the chunk size is refused (net/http refuses it before
// an extension), and so are control characters in extensions and
// trailers and a bare LF anywhere.
func (c *Chunked) Scan(p []byte) (n int, done bool, err error) {
	for n < len(p) {
		b := p[n]
		if c.state >= trailerStart && c.state <= finalLF {
			c.lineLen++
			if c.lineLen > maxTrailers {
				return n, false, ErrMalformed
			}
		}
		switch c.state {
		case chunkSize:
			v, ok := hexValue(b)
			switch {
			case ok:
				if c.digits == 15 {
					return n, false, ErrMalformed
				}
				c.size = c.size<<4 | int64(v)
				c.digits++
			case c.digits == 0:
				return n, false, ErrMalformed
			case b == '\r':
				c.lineLen = c.digits
				if !c.endSizeLine() {
					return n, false, ErrMalformed
				}
			case b == ';':
				c.state, c.lineLen = chunkExt, c.digits+1
			default:
				return n, false, ErrMalformed
			}
		case chunkExt:
			switch {
			case b == '\r':
				if !c.endSizeLine() {
					return n, false, ErrMalformed
				}
			case !isFieldValueByte(b):
				return n, false, ErrMalformed
			default:
				c.lineLen++
				if c.lineLen > maxChunkLine {
					return n, false, ErrMalformed
				}
			}
		case chunkSizeLF:
			if b != '\n' {
				return n, false, ErrMalformed
			}
			if c.size == 0 {
				c.state, c.lineLen = trailerStart, 0
			} else {
				c.state = chunkData
			}
		case chunkData:
			take := min(int64(len(p)-n), c.size)
			c.size -= take
			n += int(take)
			if c.size == 0 {
				c.state = chunkDataCR
			}
			continue
		case chunkDataCR:
			if b != '\r' {
				return n, false, ErrMalformed
			}
			c.state = chunkDataLF
		case chunkDataLF:
			if b != '\n' {
				return n, false, ErrMalformed
			}
			c.state, c.digits = chunkSize, 0
		case trailerStart:
			switch {
			case b == '\r':
				c.state = finalLF
			case tokenByte[b]:
				c.state = trailerName
			default:
				return n, false, ErrMalformed
			}
		case trailerName:
			switch {
			case b == ':':
				c.state = trailerLine
			case !tokenByte[b]:
				return n, false, ErrMalformed
			}
		case trailerLine:
			switch {
			case b == '\r':
				c.state = trailerLineLF
			case !isFieldValueByte(b):
				return n, false, ErrMalformed
			}
		case trailerLineLF:
			if b != '\n' {
				return n, false, ErrMalformed
			}
			c.state = trailerStart
		case finalLF:
			if b != '\n' {
				return n, false, ErrMalformed
			}
			c.state = chunkDone
			return n + 1, true, nil
		case chunkDone:
			return n, true, nil
		}
		n++
	}
	return n, c.state == chunkDone, nil
}

// endSizeLine accounts for the size line just ended (lineLen bytes and
// its CRLF) as net/http does, and reports whether the overhead is still
// within maxExcess.
func (c *Chunked) endSizeLine() bool {
	c.state = chunkSizeLF
	c.excess += int64(c.lineLen) + 2 - 16 - 2*c.size
	c.excess = max(c.excess, 0)
	return c.excess <= maxExcess
}

func hexValue(b byte) (byte, bool) {
	switch {
	case '0' <= b && b <= '9':
		return b - '0', true
	case 'a' <= b && b <= 'f':
		return b - 'a' + 10, true
	case 'A' <= b && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}
