package send

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DialFunc makes a connection; the caller's decides which addresses may
// be reached (the outbound-address check).
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Timeout bounds one delivery: connecting, sending and reading the answer.
const Timeout = 20 * time.Second

// Error is a failed delivery. Permanent says retrying cannot help (the
// destination refused the message itself, such as 400 or 404). RetryAfter
// is what the destination asked to wait (429, 503), zero when it did not.
type Error struct {
	Message    string
	Permanent  bool
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// SignatureHeader carries the generic webhook's signature:
// "sha256=" and the hex HMAC-SHA256 of TimestampHeader's value, a dot and
// the body, under the destination's signing key.
const (
	SignatureHeader = "X-Slipway-Signature-256"
	TimestampHeader = "X-Slipway-Timestamp"
	EventHeader     = "X-Slipway-Event"
	DeliveryHeader  = "X-Slipway-Delivery"
)

// Sign returns the signature header value of body sent at ts (Unix
// seconds) under key: binding the timestamp lets receivers refuse replays.
func Sign(key []byte, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Post is one HTTP delivery: a JSON body to a URL, with extra headers.
type Post struct {
	URL     string
	Body    []byte
	Headers map[string]string
}

// Webhook builds the generic webhook's post: the body signed with key at
// now, naming the event and the delivery in headers.
func Webhook(rawURL string, key []byte, event, deliveryID string, body []byte, now time.Time) Post {
	ts := now.Unix()
	return Post{URL: rawURL, Body: body, Headers: map[string]string{
		SignatureHeader: Sign(key, ts, body),
		TimestampHeader: strconv.FormatInt(ts, 10),
		EventHeader:     event,
		DeliveryHeader:  deliveryID,
	}}
}

// HTTP sends posts through Dial.
type HTTP struct {
	Dial DialFunc
	// UserAgent names the sender.
	UserAgent string
}

// Send posts p and reads the answer: 2xx is delivered; 408, 429 and 5xx
// are worth retrying; other statuses are permanent. The error names the
// URL's host only: the rest of a Slack or Discord URL is its credential.
func (h HTTP) Send(ctx context.Context, p Post) error {
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return &Error{Message: "the destination URL is not an http(s) URL", Permanent: true}
	}
	if h.Dial == nil {
		return &Error{Message: "no dialer: outbound connections are not configured", Permanent: true}
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(p.Body))
	if err != nil {
		return &Error{Message: "the destination URL is not usable", Permanent: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", h.userAgent())
	for k, v := range p.Headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{
		Transport: &http.Transport{
			DialContext:           h.Dial,
			Proxy:                 nil, // through a proxy, the dialer would check the proxy's address
			DisableKeepAlives:     true,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: Timeout,
			ForceAttemptHTTP2:     true,
		},
		// A redirect could lead anywhere: the check is on each dial, but a
		// webhook that moves should be edited, not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return &Error{Message: fmt.Sprintf("POST to %s: %s", u.Host, scrub(err, p.URL)), Permanent: refused(err)}
	}
	defer resp.Body.Close()
	// The answer's body is drained, never kept: a destination's words do
	// not reach Slipway's pages and logs.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	e := &Error{Message: fmt.Sprintf("POST to %s answered %s", u.Host, resp.Status)}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"))
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
	default:
		e.Permanent = true
	}
	return e
}

func (h HTTP) userAgent() string {
	if h.UserAgent != "" {
		return h.UserAgent
	}
	return "Slipway-Notifications/1"
}

// refused says the caller's Dial refused the destination: its error
// carries a code (the outbound check's destination_not_allowed). Retrying
// cannot help until the operator or the team changes a setting.
func refused(err error) bool {
	var coded interface{ ErrorCode() string }
	return errors.As(err, &coded)
}

// scrub removes the URL from an error's text: url.Error quotes it whole.
func scrub(err error, rawURL string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if rawURL != "" {
		msg = strings.ReplaceAll(msg, rawURL, "<url>")
	}
	return msg
}

// retryAfter reads Retry-After in seconds (the form Slack and Discord
// use); anything else is zero.
func retryAfter(v string) time.Duration {
	if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f > 0 {
		return time.Duration(f * float64(time.Second))
	}
	return 0
}
