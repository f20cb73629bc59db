package h1

import (
	"errors"
	"strings"
	"testing"
)

// scanWhole runs Scan over b at once; scanBytes feeds it one byte at a
// time. Both return where the body ended (or the malformed byte) and
// whether it did.
func scanWhole(b []byte) (int, bool, error) {
	var c Chunked
	return c.Scan(b)
}

func scanBytes(b []byte) (int, bool, error) {
	var c Chunked
	for i := range b {
		n, done, err := c.Scan(b[i : i+1])
		if err != nil || done {
			return i + n, done, err
		}
		if n != 1 {
			return i + n, false, errors.New("Scan took less than all of p before the end")
		}
	}
	return len(b), false, nil
}

func TestChunkedScan(t *testing.T) {
	big := strings.Repeat("x", 0x1f4)
	tests := []struct {
		name string
		body string // the whole chunked body
	}{
		{"empty body", "0\r\n\r\n"},
		{"one chunk", "5\r\nhello\r\n0\r\n\r\n"},
		{"two chunks", "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"},
		{"upper-case hex", "1F4\r\n" + big + "\r\n0\r\n\r\n"},
		{"lower-case hex", "1f4\r\n" + big + "\r\n0\r\n\r\n"},
		{"leading zeros", "0005\r\nhello\r\n000\r\n\r\n"},
		{"data holding CRLF", "7\r\n\r\n0\r\n\r\n\r\n0\r\n\r\n"},
		{"data holding binary", "4\r\n\x00\xff\r\x7f\r\n0\r\n\r\n"},
		{"extensions", "5;name=value;quoted=\"a b\"\r\nhello\r\n0;last\r\n\r\n"},
		{"empty extension", "5;\r\nhello\r\n0\r\n\r\n"},
		{"trailer", "5\r\nhello\r\n0\r\nChecksum: abc\r\n\r\n"},
		{"trailers", "5\r\nhello\r\n0\r\nA: 1\r\nB:\r\nC:\t x y \r\n\r\n"},
		{"long extension", "1;" + strings.Repeat("e", maxChunkLine-2) + "\r\nx\r\n0\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, next := range []string{"", "GET / HTTP/1.1\r\n\r\n", "0\r\n\r\n", "\r\n"} {
				b := []byte(tt.body + next)
				for feed, scan := range map[string]func([]byte) (int, bool, error){"whole": scanWhole, "bytes": scanBytes} {
					n, done, err := scan(b)
					if err != nil || !done || n != len(tt.body) {
						t.Errorf("%s, followed by %q: n=%d done=%v err=%v, want n=%d done", feed, next, n, done, err, len(tt.body))
					}
				}
			}
			// Every proper prefix is an unfinished body.
			for i := range len(tt.body) {
				n, done, err := scanWhole([]byte(tt.body[:i]))
				if err != nil || done || n != i {
					t.Fatalf("prefix %d: n=%d done=%v err=%v", i, n, done, err)
				}
			}
		})
	}
}

func TestChunkedScanAfterDone(t *testing.T) {
	var c Chunked
	if n, done, err := c.Scan([]byte("0\r\n\r\n")); n != 5 || !done || err != nil {
		t.Fatalf("n=%d done=%v err=%v", n, done, err)
	}
	if n, done, err := c.Scan([]byte("more")); n != 0 || !done || err != nil {
		t.Errorf("after the end: n=%d done=%v err=%v, want 0 true nil", n, done, err)
	}
}

func TestChunkedScanMalformed(t *testing.T) {
	tests := []struct {
		name string
		in   string
		at   int // the offset of the byte refused
	}{
		{"no CRLF after data", "5\r\nhelloX\r\n0\r\n\r\n", 8},
		{"LF only after data", "5\r\nhello\n0\r\n\r\n", 8},
		{"CR then X after data", "5\r\nhello\rX", 9},
		{"data longer than size", "3\r\nhello\r\n0\r\n\r\n", 6},
		{"non-hex size", "g\r\n", 0},
		{"non-hex after digits", "5g\r\nhello\r\n", 1},
		{"signed size", "+5\r\nhello\r\n", 0},
		{"0x prefix", "0x5\r\nhello\r\n", 1},
		{"empty size", "\r\nhello\r\n", 0},
		{"empty size with extension", ";a\r\n", 0},
		{"16 digits", "0000000000000005\r\nhello\r\n", 15},
		{"bare LF after size", "5\nhello\r\n", 1},
		{"bare LF after extension", "5;a\nhello\r\n", 3},
		{"CR not LF after size", "5\r\rhello", 2},
		{"space after size", "5 \r\nhello\r\n", 1},
		{"space before extension", "5 ;a\r\nhello\r\n", 1},
		{"tab after size", "5\t\r\nhello\r\n", 1},
		{"CTL in extension", "5;a\x01\r\nhello\r\n", 3},
		{"extension too long", "1;" + strings.Repeat("e", maxChunkLine-1) + "\r\n", maxChunkLine},
		{"bare LF final", "0\r\n\n", 3},
		{"bare LF trailer", "0\r\nA: 1\n\r\n", 7},
		{"folded trailer", "0\r\nA: 1\r\n 2\r\n\r\n", 9},
		{"trailer without colon", "0\r\nChecksum\r\n\r\n", 11},
		{"space before trailer colon", "0\r\nA : 1\r\n\r\n", 4},
		{"CTL in trailer", "0\r\nA: \x00\r\n\r\n", 6},
		{"CR not LF ending trailer", "0\r\nA: 1\r\r\n", 8},
		{"trailers too long", "0\r\nA: " + strings.Repeat("a", maxTrailers-6) + "\r\n\r\n", maxTrailers + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for feed, scan := range map[string]func([]byte) (int, bool, error){"whole": scanWhole, "bytes": scanBytes} {
				n, done, err := scan([]byte(tt.in))
				if !errors.Is(err, ErrMalformed) || done || n != tt.at {
					t.Errorf("%s: n=%d done=%v err=%v, want ErrMalformed at %d", feed, n, done, err, tt.at)
				}
			}
		})
	}
}

// TestChunkedScanLimits checks the bounds at their edges: the longest
// trailer section passes, and net/http's overhead bound on size lines
// (see maxExcess) holds across chunks.
func TestChunkedScanLimits(t *testing.T) {
	trailers := "0\r\nA: " + strings.Repeat("a", maxTrailers-7) + "\r\n\r\n"
	if n, done, err := scanWhole([]byte(trailers)); !done || err != nil || n != len(trailers) {
		t.Errorf("longest trailers: n=%d done=%v err=%v", n, done, err)
	}

	// Each chunk carries 1 byte under a 1000-byte size line: 1002 bytes
	// of line against an allowance of 18, so the 17th line tips it over.
	ext := "1;" + strings.Repeat("e", 998) + "\r\n"
	var body strings.Builder
	for range 16 {
		body.WriteString(ext + "x\r\n")
	}
	ok := body.String() + "0\r\n\r\n"
	if n, done, err := scanWhole([]byte(ok)); !done || err != nil || n != len(ok) {
		t.Errorf("16 heavy chunks: n=%d done=%v err=%v", n, done, err)
	}
	body.WriteString(ext)
	bad := body.String()
	if n, _, err := scanWhole([]byte(bad)); !errors.Is(err, ErrMalformed) || n != len(bad)-2 {
		t.Errorf("17 heavy chunks: n=%d err=%v, want ErrMalformed at %d", n, err, len(bad)-2)
	}
	// Data pays for its size line: the same lines over big chunks pass.
	var heavy strings.Builder
	for range 40 {
		heavy.WriteString("200;" + strings.Repeat("e", 996) + "\r\n" + strings.Repeat("d", 0x200) + "\r\n")
	}
	heavy.WriteString("0\r\n\r\n")
	if n, done, err := scanWhole([]byte(heavy.String())); !done || err != nil || n != heavy.Len() {
		t.Errorf("40 paid chunks: n=%d done=%v err=%v", n, done, err)
	}
}
