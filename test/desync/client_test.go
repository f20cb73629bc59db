package desync

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// response is one HTTP response as a client read it.
type response struct {
	status int
	header http.Header
	body   []byte
	// bodyErr says the body did not end as its framing said it would.
	bodyErr error
}

func (r response) String() string {
	body := string(r.body)
	if len(body) > 200 {
		body = body[:200] + fmt.Sprintf("...(%d bytes)", len(r.body))
	}
	s := fmt.Sprintf("%d %q", r.status, body)
	if r.bodyErr != nil {
		s += fmt.Sprintf(" (body: %v)", r.bodyErr)
	}
	return s
}

// client is a raw HTTP/1 connection to a proxy.
type client struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

// dial connects to p's plain-HTTP listener (via "http") or its TLS
// listener (via "https", offering only http/1.1 and naming sni) from the
// local address from ("" for any).
func (p *proxy) dial(t testing.TB, via, sni, from string) *client {
	t.Helper()
	c, err := p.dialErr(via, sni, from)
	if err != nil {
		t.Fatalf("dial %s %s: %v", p.name, via, err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c, br: bufio.NewReader(c)}
}

func (p *proxy) dialErr(via, sni, from string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	if via == "https" {
		return tls.DialWithDialer(d, "tcp", p.https, cert.ClientConfig(sni, "http/1.1"))
	}
	return d.Dial("tcp", p.http)
}

// write sends s; an error (the proxy closed the connection) is returned
// for the caller to judge.
func (c *client) write(s string) error {
	c.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := io.WriteString(c.c, s)
	return err
}

func (c *client) close() { c.c.Close() }

// ending is how reading responses ended.
type ending string

const (
	endClosed  ending = "the proxy closed the connection"
	endDone    ending = "the awaited response arrived"
	endSilence ending = "the connection stayed open and silent"
)

// next reads one response within d.
func (c *client) next(d time.Duration) (response, error) {
	c.c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return response{}, err
	}
	r := response{status: resp.StatusCode, header: resp.Header}
	r.body, r.bodyErr = io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return r, nil
}

// until reads responses for at most d, until the proxy closes the
// connection or done holds for one (nil: never). A response whose body
// broke off ends the reading as a close.
func (c *client) until(d time.Duration, done func(response) bool) ([]response, ending) {
	deadline := time.Now().Add(d)
	var got []response
	for {
		r, err := c.next(time.Until(deadline))
		if err != nil {
			if isTimeout(err) {
				return got, endSilence
			}
			return got, endClosed
		}
		got = append(got, r)
		if r.bodyErr != nil {
			return got, endClosed
		}
		if done != nil && done(r) {
			return got, endDone
		}
	}
}

// closedWithin reports whether the proxy closes the connection within d
// without sending anything more, and what it sent if it did.
func (c *client) closedWithin(d time.Duration) (bool, string) {
	c.c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c.br)
	if isTimeout(err) {
		return false, string(b)
	}
	return true, string(b)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// get sends one GET with Connection: close and reads the answer.
func (p *proxy) get(via, host, path string) (response, error) {
	sni := ""
	if via == "https" {
		sni = host
	}
	c, err := p.dialErr(via, sni, "")
	if err != nil {
		return response{}, err
	}
	defer c.Close()
	cl := &client{c: c, br: bufio.NewReader(c)}
	if err := cl.write("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n"); err != nil {
		return response{}, err
	}
	return cl.next(10 * time.Second)
}

// h2 returns an HTTP/2 client of p's TLS listener (whatever the URL's
// host, it connects there) from the local address from ("" for any),
// closed when t ends.
func (p *proxy) h2(t testing.TB, from string) *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			if from != "" {
				d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
			}
			return d.DialContext(ctx, network, p.https)
		},
		TLSClientConfig:   cert.ClientConfig(""),
		ForceAttemptHTTP2: true,
	}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// token returns a string unique to one case, for finding what the
// backend received for it.
func token(t testing.TB) string {
	t.Helper()
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' {
			return r
		}
		return '-'
	}, t.Name())
	return fmt.Sprintf("%s-%d", name, time.Now().UnixNano()%1e9)
}
