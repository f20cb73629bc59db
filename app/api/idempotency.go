package api

import (
	"context"
	"crypto/sha256"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// IdempotencyKeyHeader names the header a client sets to make a mutating
// request safe to retry.
const IdempotencyKeyHeader = "Idempotency-Key"

const (
	// idempotencyKeep is how long a first response is replayed.
	idempotencyKeep = 24 * time.Hour
	// idempotencyClaim is how long a running request holds its key before
	// a retry may take it over (the server died before answering).
	idempotencyClaim  = 5 * time.Minute
	maxIdempotencyKey = 255
)

// idempotency runs after authenticate. A POST, PUT, PATCH or DELETE that
// carries Idempotency-Key runs once per (team, token, key, method, path):
// its first answer below 500 is stored and replayed to repeats for 24
// hours. A repeat with a different query, content type or body is refused
// with idempotency_key_reused; one that arrives while the first still runs
// gets 409 idempotency_key_in_progress and may retry.
func (h *handler) idempotency(c *fiber.Ctx) error {
	switch c.Method() {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return c.Next()
	}
	raw := c.Get(IdempotencyKeyHeader)
	if raw == "" {
		return c.Next()
	}
	if !validIdempotencyKey(raw) {
		return WriteError(c, http.StatusBadRequest, "idempotency_key_invalid",
			"Idempotency-Key must be 1-255 printable ASCII characters, such as a UUID", map[string]any{"field": IdempotencyKeyHeader})
	}
	ctx := c.UserContext()
	tok := callerOf(c).token
	k := store.IdempotencyKey{TeamID: tok.TeamID, Principal: tok.ID, Key: raw, Method: c.Method(), Path: c.Path()}
	outcome, rec, err := h.store.ClaimIdempotencyKey(ctx, k, requestFingerprint(c), h.now(), idempotencyClaim, idempotencyKeep)
	if err != nil {
		return h.fail(c, err)
	}
	switch outcome {
	case store.ClaimMismatch:
		return WriteError(c, http.StatusUnprocessableEntity, "idempotency_key_reused",
			"this Idempotency-Key was already used for a different request; use a new key for a new request",
			map[string]any{"field": IdempotencyKeyHeader})
	case store.ClaimInProgress:
		c.Set(fiber.HeaderRetryAfter, "1")
		return WriteError(c, http.StatusConflict, "idempotency_key_in_progress",
			"a request with this Idempotency-Key is still running; retry shortly to get its answer",
			map[string]any{"field": IdempotencyKeyHeader})
	case store.ClaimReplay:
		c.Set("Idempotent-Replayed", "true")
		if rec.ContentType != "" {
			c.Set(fiber.HeaderContentType, rec.ContentType)
		}
		return c.Status(rec.Status).Send(rec.Body)
	}

	// The claim is ours: run the request and keep what it answered. A
	// server error is not kept, so a retry with the same key runs again.
	// The stores below use a context that outlives a client hang-up: the
	// request's effects are committed and its key must say so.
	bg := context.WithoutCancel(ctx)
	if err := c.Next(); err != nil {
		if rerr := h.store.ReleaseIdempotencyKey(bg, k); rerr != nil {
			h.log.ErrorContext(ctx, "release idempotency key", "err", rerr)
		}
		return err
	}
	res := c.Response()
	if res.StatusCode() >= http.StatusInternalServerError {
		if err := h.store.ReleaseIdempotencyKey(bg, k); err != nil {
			h.log.ErrorContext(ctx, "release idempotency key", "err", err)
		}
		return nil
	}
	if err := h.store.CompleteIdempotencyKey(bg, k, res.StatusCode(), string(res.Header.ContentType()), res.Body()); err != nil {
		// The request itself succeeded; a retry will see the claim expire
		// and run again, which is the best left to do.
		h.log.ErrorContext(ctx, "store idempotent response", "err", err)
	}
	return nil
}

func validIdempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > maxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// requestFingerprint hashes what makes two requests the same request
// besides their method and path: query, content type and body.
func requestFingerprint(c *fiber.Ctx) []byte {
	h := sha256.New()
	for _, part := range [][]byte{c.Request().URI().QueryString(), c.Request().Header.ContentType(), c.Body()} {
		// Length-prefix each part so moving bytes between parts changes the sum.
		n := len(part)
		h.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
		h.Write(part)
	}
	return h.Sum(nil)
}
