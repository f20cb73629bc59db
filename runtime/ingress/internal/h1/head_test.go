package h1

import (
	"errors"
	"strings"
	"testing"
)

const testMax = 16 << 10

// head joins lines with CRLF and ends the head with an empty line.
func head(lines ...string) string {
	return strings.Join(lines, "\r\n") + "\r\n\r\n"
}

func TestParseRequestValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Request
	}{
		{
			name: "simple GET",
			in:   head("GET /a/b?c=d HTTP/1.1", "Host: example.com", "Accept: */*"),
			want: Request{Method: []byte("GET"), Target: []byte("/a/b?c=d"), Host: []byte("example.com"), HasHost: true,
				Message: Message{Minor: 1, ContentLength: -1}},
		},
		{
			name: "content length and odd-case names",
			in:   head("POST /upload HTTP/1.1", "hOsT:   example.com:8080  ", "content-LENGTH: 0012"),
			want: Request{Method: []byte("POST"), Target: []byte("/upload"), Host: []byte("example.com:8080"), HasHost: true,
				Message: Message{Minor: 1, ContentLength: 12}},
		},
		{
			name: "HTTP/1.0 without Host",
			in:   head("GET / HTTP/1.0"),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Message: Message{Minor: 0, ContentLength: -1, Close: true}},
		},
		{
			name: "empty Host",
			in:   head("GET / HTTP/1.1", "Host:"),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Host: []byte(""), HasHost: true, Message: Message{Minor: 1, ContentLength: -1}},
		},
		{
			name: "IPv6 Host with port",
			in:   head("GET / HTTP/1.1", "Host: [::1]:8080"),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Host: []byte("[::1]:8080"), HasHost: true, Message: Message{Minor: 1, ContentLength: -1}},
		},
		{
			name: "absolute form",
			in:   head("GET http://App.Example.com:8080/a?b HTTP/1.1", "Host: other.example"),
			want: Request{Method: []byte("GET"), Target: []byte("http://App.Example.com:8080/a?b"), Host: []byte("other.example"), HasHost: true,
				Authority: []byte("App.Example.com:8080"), Path: []byte("/a?b"), Message: Message{Minor: 1, ContentLength: -1}},
		},
		{
			name: "absolute form without path",
			in:   head("GET HTTPS://example.com HTTP/1.1", "Host: example.com"),
			want: Request{Method: []byte("GET"), Target: []byte("HTTPS://example.com"), Host: []byte("example.com"), HasHost: true,
				Authority: []byte("example.com"), Path: []byte("/"), Message: Message{Minor: 1, ContentLength: -1}},
		},
		{
			name: "HTTP/1.1 Connection close",
			in:   head("GET / HTTP/1.1", "Host: h", "Connection: Close"),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Host: []byte("h"), HasHost: true,
				Message: Message{Minor: 1, ContentLength: -1, Close: true}},
		},
		{
			name: "HTTP/1.0 closes by default",
			in:   head("GET / HTTP/1.0", "Host: h"),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Host: []byte("h"), HasHost: true,
				Message: Message{Minor: 0, ContentLength: -1, Close: true}},
		},
		{
			name: "HTTP/1.0 keep-alive",
			in:   head("GET / HTTP/1.0", "Connection: Keep-Alive"),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Message: Message{Minor: 0, ContentLength: -1}},
		},
		{
			name: "HTTP/1.0 keep-alive and close",
			in:   head("GET / HTTP/1.0", "Connection: keep-alive", "Connection: close"),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Message: Message{Minor: 0, ContentLength: -1, Close: true}},
		},
		{
			name: "Connection options",
			in:   head("GET / HTTP/1.1", "Host: h", "Connection: keep-alive, foo,,  "),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Host: []byte("h"), HasHost: true, Message: Message{Minor: 1, ContentLength: -1, Options: true}},
		},
		{
			name: "close among options",
			in:   head("GET / HTTP/1.1", "Host: h", "Connection: x-trace ,\tclose"),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Host: []byte("h"), HasHost: true, Message: Message{Minor: 1, ContentLength: -1, Options: true, Close: true}},
		},
		{
			name: "not quite close",
			in:   head("GET / HTTP/1.1", "Host: h", "Connection: close x"),
			want: Request{Method: []byte("GET"), Target: []byte("/"), Host: []byte("h"), HasHost: true, Message: Message{Minor: 1, ContentLength: -1, Options: true}},
		},
		{
			name: "Upgrade",
			in:   head("GET /ws HTTP/1.1", "Host: h", "Connection: Upgrade", "Upgrade: websocket"),
			want: Request{Method: []byte("GET"), Target: []byte("/ws"), Host: []byte("h"), HasHost: true,
				Message: Message{Minor: 1, ContentLength: -1, Options: true, Upgrade: true}},
		},
		{
			name: "Expect",
			in:   head("PUT /x HTTP/1.1", "Host: h", "Expect: 100-continue", "Content-Length: 5"),
			want: Request{Method: []byte("PUT"), Target: []byte("/x"), Host: []byte("h"), HasHost: true, Message: Message{Minor: 1, ContentLength: 5, Expect: true}},
		},
		{
			name: "chunked",
			in:   head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding: Chunked"),
			want: Request{Method: []byte("POST"), Target: []byte("/"), Host: []byte("h"), HasHost: true,
				Message: Message{Minor: 1, ContentLength: -1, TransferEncoding: true, Chunked: true}},
		},
		{
			name: "OPTIONS asterisk",
			in:   head("OPTIONS * HTTP/1.1", "Host: h"),
			want: Request{Method: []byte("OPTIONS"), Target: []byte("*"), Host: []byte("h"), HasHost: true, Message: Message{Minor: 1, ContentLength: -1}},
		},
		{
			name: "escapes, obs-text and empty value",
			in:   head("GET /%41%7e?q=%2F HTTP/1.1", "Host: h", "X-Empty:", "X-Latin: caf\xe9"),
			want: Request{Method: []byte("GET"), Target: []byte("/%41%7e?q=%2F"), Host: []byte("h"), HasHost: true, Message: Message{Minor: 1, ContentLength: -1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.in + "body bytes")
			var r Request
			if err := ParseRequest(b, testMax, &r); err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			checkRequest(t, &r, &tt.want)
			if r.HeadLen != len(tt.in) {
				t.Errorf("HeadLen = %d, want %d", r.HeadLen, len(tt.in))
			}
			if want := strings.Index(tt.in, "\r\n") + 2; r.RequestLineLen != want {
				t.Errorf("RequestLineLen = %d, want %d", r.RequestLineLen, want)
			}
			if want := strings.Count(tt.in, "\r\n") - 2; len(r.Fields) != want {
				t.Errorf("%d fields, want %d", len(r.Fields), want)
			}
		})
	}
}

func checkRequest(t *testing.T, got, want *Request) {
	t.Helper()
	if string(got.Method) != string(want.Method) || string(got.Target) != string(want.Target) {
		t.Errorf("request line %q %q, want %q %q", got.Method, got.Target, want.Method, want.Target)
	}
	if string(got.Host) != string(want.Host) || got.HasHost != want.HasHost {
		t.Errorf("Host %q (%v), want %q (%v)", got.Host, got.HasHost, want.Host, want.HasHost)
	}
	wantPath := want.Path
	if wantPath == nil {
		wantPath = want.Target
	}
	if string(got.Authority) != string(want.Authority) || (got.Authority == nil) != (want.Authority == nil) || string(got.Path) != string(wantPath) {
		t.Errorf("authority %q path %q, want %q %q", got.Authority, got.Path, want.Authority, wantPath)
	}
	checkMessage(t, &got.Message, &want.Message)
}

// checkMessage compares the framing facts (not Fields or HeadLen).
func checkMessage(t *testing.T, got, want *Message) {
	t.Helper()
	g, w := *got, *want
	g.Fields, g.HeadLen, w.Fields, w.HeadLen = nil, 0, nil, 0
	if g.Minor != w.Minor || g.ContentLength != w.ContentLength || g.TransferEncoding != w.TransferEncoding ||
		g.Chunked != w.Chunked || g.Close != w.Close || g.Options != w.Options || g.Upgrade != w.Upgrade || g.Expect != w.Expect {
		t.Errorf("message\n got %+v\nwant %+v", g, w)
	}
}

func TestParseRequestFields(t *testing.T) {
	in := head("GET / HTTP/1.1", "Host:\texample.com\t", "X-A:  one two  ", "x-b:")
	var r Request
	r.Fields = make([]Field, 0, 1)
	if err := ParseRequest([]byte(in), testMax, &r); err != nil {
		t.Fatal(err)
	}
	want := []Field{{[]byte("Host"), []byte("example.com")}, {[]byte("X-A"), []byte("one two")}, {[]byte("x-b"), []byte("")}}
	if len(r.Fields) != len(want) {
		t.Fatalf("fields %q, want %q", r.Fields, want)
	}
	for i := range want {
		if string(r.Fields[i].Name) != string(want[i].Name) || string(r.Fields[i].Value) != string(want[i].Value) {
			t.Errorf("field %d = %q: %q, want %q: %q", i, r.Fields[i].Name, r.Fields[i].Value, want[i].Name, want[i].Value)
		}
	}
	// Parsing again into the same Request resets what the last head set.
	if err := ParseRequest([]byte(head("GET /x HTTP/1.0", "Content-Length: 3")), testMax, &r); err != nil {
		t.Fatal(err)
	}
	checkRequest(t, &r, &Request{Method: []byte("GET"), Target: []byte("/x"), Message: Message{ContentLength: 3, Close: true}})
	if len(r.Fields) != 1 {
		t.Errorf("fields after reuse: %q", r.Fields)
	}
}

func TestParseRequestErrors(t *testing.T) {
	long := "GET /" + strings.Repeat("a", 100) + " HTTP/1.1\r\n"
	tests := []struct {
		name string
		in   string
		max  int
		want error
	}{
		{"empty", "", testMax, ErrIncomplete},
		{"no empty line yet", "GET / HTTP/1.1\r\nHost: h\r\n", testMax, ErrIncomplete},
		{"half the final CRLF", "GET / HTTP/1.1\r\nHost: h\r\n\r", testMax, ErrIncomplete},
		{"too large, unfinished", long, 50, ErrTooLarge},
		{"too large, finished", long + "\r\n", 50, ErrTooLarge},
		{"ends one past max", head("GET / HTTP/1.1"), len(head("GET / HTTP/1.1")) - 1, ErrTooLarge},

		{"bare LF line ends", "GET / HTTP/1.1\nHost: h\r\n\r\n", testMax, ErrMalformed},
		{"bare LF in fields", "GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n", testMax, ErrMalformed},
		{"bare LF head", "GET / HTTP/1.1\nHost: h\n\n", testMax, ErrMalformed},
		{"bare LF head, unfinished", "GET / HTTP/1.1\nHo", testMax, ErrMalformed},
		{"bare CR in value", head("GET / HTTP/1.1", "X: a\rb"), testMax, ErrMalformed},
		{"leading empty line", "\r\n" + head("GET / HTTP/1.1"), testMax, ErrMalformed},
		{"obs-fold space", head("GET / HTTP/1.1", "X: a", " b"), testMax, ErrMalformed},
		{"obs-fold tab", head("GET / HTTP/1.1", "X: a", "\tb"), testMax, ErrMalformed},
		{"space before colon", head("GET / HTTP/1.1", "Host : h"), testMax, ErrMalformed},
		{"tab before colon", head("GET / HTTP/1.1", "Content-Length\t: 1"), testMax, ErrMalformed},
		{"empty name", head("GET / HTTP/1.1", ": v"), testMax, ErrMalformed},
		{"no colon", head("GET / HTTP/1.1", "Host"), testMax, ErrMalformed},
		{"name with slash", head("GET / HTTP/1.1", "X/Y: v"), testMax, ErrMalformed},
		{"NUL in value", head("GET / HTTP/1.1", "X: a\x00b"), testMax, ErrMalformed},
		{"CTL in value", head("GET / HTTP/1.1", "X: a\x1bb"), testMax, ErrMalformed},
		{"DEL in value", head("GET / HTTP/1.1", "X: a\x7f"), testMax, ErrMalformed},
		{"two Content-Length", head("POST / HTTP/1.1", "Content-Length: 1", "Content-Length: 2"), testMax, ErrMalformed},
		{"two equal Content-Length", head("POST / HTTP/1.1", "Content-Length: 1", "content-length: 1"), testMax, ErrMalformed},
		{"Content-Length list", head("POST / HTTP/1.1", "Content-Length: 1, 1"), testMax, ErrMalformed},
		{"Content-Length empty", head("POST / HTTP/1.1", "Content-Length: "), testMax, ErrMalformed},
		{"Content-Length hex", head("POST / HTTP/1.1", "Content-Length: 0x10"), testMax, ErrMalformed},
		{"Content-Length plus", head("POST / HTTP/1.1", "Content-Length: +1"), testMax, ErrMalformed},
		{"Content-Length minus", head("POST / HTTP/1.1", "Content-Length: -1"), testMax, ErrMalformed},
		{"Content-Length inner space", head("POST / HTTP/1.1", "Content-Length: 1 0"), testMax, ErrMalformed},
		{"Content-Length 19 digits", head("POST / HTTP/1.1", "Content-Length: 1000000000000000000"), testMax, ErrMalformed},
		{"two Host", head("GET / HTTP/1.1", "Host: a", "Host: a"), testMax, ErrMalformed},
		{"two Host any case", head("GET / HTTP/1.1", "Host: a", "HOST: b"), testMax, ErrMalformed},
		{"HTTP/2.0", head("GET / HTTP/2.0"), testMax, ErrVersion},
		{"HTTP/2.0, unfinished head", "GET / HTTP/2.0\r\nHost", testMax, ErrVersion},
		{"HTTP/1.2", head("GET / HTTP/1.2"), testMax, ErrVersion},
		{"HTTP/1.10", head("GET / HTTP/1.10"), testMax, ErrVersion},
		{"HTTP/1", head("GET / HTTP/1"), testMax, ErrVersion},
		{"FOO/9", head("GET / FOO/9"), testMax, ErrVersion},
		{"lower-case http", head("GET / http/1.1"), testMax, ErrVersion},
		{"version with letters", head("GET / HTTP/1.x"), testMax, ErrMalformed},
		{"version without name", head("GET / /1.1"), testMax, ErrMalformed},
		{"no version", head("GET /"), testMax, ErrMalformed},
		{"bare CR after version", "GET / HTTP/1.1\r\r\nHost: h\r\n\r\n", testMax, ErrMalformed},
		{"bare CR in target", head("GET /a\rb HTTP/1.1", "Host: h"), testMax, ErrMalformed},
		{"NUL after version", head("GET / HTTP/1.1\x00", "Host: h"), testMax, ErrMalformed},
		{"two spaces after method", head("GET  / HTTP/1.1"), testMax, ErrMalformed},
		{"space in target", head("GET /a b HTTP/1.1"), testMax, ErrMalformed},
		{"trailing space", head("GET / HTTP/1.1 "), testMax, ErrMalformed},
		{"tab in target", head("GET /a\tb HTTP/1.1"), testMax, ErrMalformed},
		{"NUL in target", head("GET /a\x00 HTTP/1.1"), testMax, ErrMalformed},
		{"DEL in target", head("GET /a\x7f HTTP/1.1"), testMax, ErrMalformed},
		{"non-ASCII target", head("GET /caf\xc3\xa9 HTTP/1.1"), testMax, ErrMalformed},
		{"fragment", head("GET /a#b HTTP/1.1"), testMax, ErrMalformed},
		{"bad escape", head("GET /%zz HTTP/1.1"), testMax, ErrMalformed},
		{"short escape", head("GET /a%4 HTTP/1.1"), testMax, ErrMalformed},
		{"absolute form with userinfo", head("GET http://evil@victim.example/ HTTP/1.1", "Host: victim.example"), testMax, ErrMalformed},
		{"absolute form, other scheme", head("GET ftp://victim.example/ HTTP/1.1", "Host: victim.example"), testMax, ErrMalformed},
		{"absolute form, no host", head("GET http:///a HTTP/1.1", "Host: victim.example"), testMax, ErrMalformed},
		{"absolute form, query without path", head("GET http://h?q HTTP/1.1", "Host: h"), testMax, ErrMalformed},
		{"absolute form, bad port", head("GET http://h:x/ HTTP/1.1", "Host: h"), testMax, ErrMalformed},
		{"HTTP/1.1 without Host", head("GET / HTTP/1.1"), testMax, ErrMalformed},
		{"Host with userinfo", head("GET / HTTP/1.1", "Host: evil.example@victim.example"), testMax, ErrMalformed},
		{"Host with path", head("GET / HTTP/1.1", "Host: victim.example/x"), testMax, ErrMalformed},
		{"Host with escape", head("GET / HTTP/1.1", "Host: victim%2eexample"), testMax, ErrMalformed},
		{"Host with bad port", head("GET / HTTP/1.1", "Host: victim.example:80x"), testMax, ErrMalformed},
		{"Host with comma", head("GET / HTTP/1.1", "Host: a.example, b.example"), testMax, ErrMalformed},
		{"Host with bad IPv6", head("GET / HTTP/1.1", "Host: [::1"), testMax, ErrMalformed},
		{"Content-Length and chunked", head("POST / HTTP/1.1", "Host: h", "Content-Length: 5", "Transfer-Encoding: chunked"), testMax, ErrMalformed},
		{"chunked and Content-Length", head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding: chunked", "Content-Length: 5"), testMax, ErrMalformed},
		{"chunked in HTTP/1.0", head("POST / HTTP/1.0", "Transfer-Encoding: chunked"), testMax, ErrMalformed},
		{"two TE fields", head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding: chunked", "Transfer-Encoding: chunked"), testMax, ErrMalformed},
		{"TE gzip, chunked", head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding: gzip, chunked"), testMax, ErrCoding},
		{"TE chunked, identity", head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding: chunked, identity"), testMax, ErrCoding},
		{"TE identity", head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding: identity"), testMax, ErrCoding},
		{"TE xchunked", head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding: xchunked"), testMax, ErrCoding},
		{"TE xchunked with Content-Length", head("POST / HTTP/1.1", "Host: h", "Content-Length: 3", "Transfer-Encoding: xchunked"), testMax, ErrCoding},
		{"TE empty", head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding:"), testMax, ErrCoding},
		{"authority form", head("CONNECT example.com:443 HTTP/1.1", "Host: example.com:443"), testMax, ErrMalformed},
		{"relative target", head("GET a/b HTTP/1.1"), testMax, ErrMalformed},
		{"asterisk for GET", head("GET * HTTP/1.1"), testMax, ErrMalformed},
		{"empty method", head(" / HTTP/1.1"), testMax, ErrMalformed},
		{"method with slash", head("GE/T / HTTP/1.1"), testMax, ErrMalformed},
		{"method with colon", head("GET: / HTTP/1.1"), testMax, ErrMalformed},
		{"method with NUL", head("G\x00T / HTTP/1.1"), testMax, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Request
			if err := ParseRequest([]byte(tt.in), tt.max, &r); !errors.Is(err, tt.want) {
				t.Errorf("ParseRequest(%q) = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestParseResponse(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		status     int
		statusLine int
		want       Message
	}{
		{"200 OK", head("HTTP/1.1 200 OK", "Content-Length: 2"), 200, 17, Message{Minor: 1, ContentLength: 2}},
		{"204 no reason", head("HTTP/1.1 204"), 204, 14, Message{Minor: 1, ContentLength: -1}},
		{"empty reason", head("HTTP/1.1 304 ", "ETag: \"x\""), 304, 15, Message{Minor: 1, ContentLength: -1}},
		{"long reason", head("HTTP/1.0 404 Not Found Here", "Connection: keep-alive"), 404, 29, Message{Minor: 0, ContentLength: -1}},
		{"HTTP/1.0 closes", head("HTTP/1.0 200 OK"), 200, 17, Message{Minor: 0, ContentLength: -1, Close: true}},
		{"101", head("HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: upgrade"), 101, 34,
			Message{Minor: 1, ContentLength: -1, Upgrade: true, Options: true}},
		{"chunked", head("HTTP/1.1 200 OK", "Transfer-Encoding: gzip, chunked", "Connection: close"), 200, 17,
			Message{Minor: 1, ContentLength: -1, TransferEncoding: true, Chunked: true, Close: true}},
		{"999", head("HTTP/1.1 999 Whatever"), 999, 23, Message{Minor: 1, ContentLength: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Response
			if err := ParseResponse([]byte(tt.in+"xyz"), testMax, &r); err != nil {
				t.Fatalf("ParseResponse: %v", err)
			}
			if r.Status != tt.status {
				t.Errorf("Status = %d, want %d", r.Status, tt.status)
			}
			if r.StatusLineLen != tt.statusLine {
				t.Errorf("StatusLineLen = %d, want %d", r.StatusLineLen, tt.statusLine)
			}
			if r.HeadLen != len(tt.in) {
				t.Errorf("HeadLen = %d, want %d", r.HeadLen, len(tt.in))
			}
			checkMessage(t, &r.Message, &tt.want)
		})
	}
}

func TestParseResponseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"incomplete", "HTTP/1.1 200 OK\r\n", ErrIncomplete},
		{"too large", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("y", testMax), ErrTooLarge},
		{"short", head("HTTP/1.1 20"), ErrMalformed},
		{"no status", head("HTTP/1.1"), ErrMalformed},
		{"letter in status", head("HTTP/1.1 2x0 OK"), ErrMalformed},
		{"sign in status", head("HTTP/1.1 +20 OK"), ErrMalformed},
		{"four digits", head("HTTP/1.1 2000 OK"), ErrMalformed},
		{"status below 100", head("HTTP/1.1 099 Low"), ErrMalformed},
		{"two spaces", head("HTTP/1.1  200 OK"), ErrMalformed},
		{"tab separator", head("HTTP/1.1\t200 OK"), ErrMalformed},
		{"HTTP/2.0", head("HTTP/2.0 200 OK"), ErrMalformed},
		{"lower-case", head("http/1.1 200 OK"), ErrMalformed},
		{"CTL in reason", head("HTTP/1.1 200 O\x01K"), ErrMalformed},
		{"bare LF", "HTTP/1.1 200 OK\nX: y\r\n\r\n", ErrMalformed},
		{"bare LF head", "HTTP/1.1 200 OK\nX: y\n\n", ErrMalformed},
		{"obs-fold", head("HTTP/1.1 200 OK", "X: y", " z"), ErrMalformed},
		{"two Content-Length", head("HTTP/1.1 200 OK", "Content-Length: 1", "Content-Length: 1"), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Response
			if err := ParseResponse([]byte(tt.in), testMax, &r); !errors.Is(err, tt.want) {
				t.Errorf("ParseResponse(%q) = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestEqualFold(t *testing.T) {
	for _, tt := range []struct {
		b, lower string
		want     bool
	}{
		{"Content-Length", "content-length", true},
		{"HOST", "host", true},
		{"hosts", "host", false},
		{"hosT", "hose", false},
		{"", "", true},
	} {
		if got := EqualFold([]byte(tt.b), tt.lower); got != tt.want {
			t.Errorf("EqualFold(%q, %q) = %v", tt.b, tt.lower, got)
		}
	}
}
