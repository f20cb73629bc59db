package github

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryPolicy bounds how GitHub calls are retried. A wait longer than
// MaxWait is not slept through: the call fails at once and the River job
// that made it retries later, so no worker sits idle for a rate-limit hour.
type RetryPolicy struct {
	// Attempts is the most tries per request (default 4).
	Attempts int
	// BaseDelay is the first backoff after a 5xx (default 500 ms), doubled
	// each time, with jitter.
	BaseDelay time.Duration
	// MaxWait is the longest single wait honoured (default 30 s).
	MaxWait time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxWait <= 0 {
		p.MaxWait = 30 * time.Second
	}
	return p
}

// retryTransport retries 5xx answers, 429 and secondary rate limits (a 403
// with Retry-After or an exhausted X-RateLimit-Remaining), and network
// errors of requests that are safe to repeat.
type retryTransport struct {
	base   http.RoundTripper
	policy RetryPolicy
	now    func() time.Time
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			r = req.Clone(req.Context())
			if req.Body != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := t.base.RoundTrip(r)
		wait, ok := t.retryAfter(req, resp, err, attempt)
		if !ok || attempt >= t.policy.Attempts || wait > t.policy.MaxWait {
			return resp, err
		}
		if req.Body != nil && req.GetBody == nil {
			return resp, err // the body is spent and cannot be sent again
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
		}
		if err := sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// retryAfter says whether the outcome is worth retrying and after how long.
func (t *retryTransport) retryAfter(req *http.Request, resp *http.Response, err error, attempt int) (time.Duration, bool) {
	backoff := t.policy.BaseDelay << (attempt - 1)
	backoff += time.Duration(rand.Int64N(int64(backoff)/4 + 1))
	if err != nil {
		// A POST that died on the wire may have been applied; only repeat
		// what is safe to repeat.
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete:
			return backoff, req.Context().Err() == nil
		}
		return 0, false
	}
	if d, ok := headerWait(resp.Header, t.now()); ok && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) {
		return d, true
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return backoff, true
	}
	return 0, false
}

// headerWait reads Retry-After (seconds) or, when the rate limit is spent,
// X-RateLimit-Reset (a Unix time).
func headerWait(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second, true
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(at.Sub(now), 0), true
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(reset, 0).Sub(now), 0) + time.Second, true
		}
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
