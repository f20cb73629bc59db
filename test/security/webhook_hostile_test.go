package security

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/slipwayhq/slipway/app/webhook"
	"github.com/slipwayhq/slipway/store/storetest"
)

// recordingJobs is the webhook's job inserter: it keeps what was queued.
type recordingJobs struct {
	mu   sync.Mutex
	args []river.JobArgs
}

func (r *recordingJobs) InsertTx(_ context.Context, _ pgx.Tx, args river.JobArgs, _ *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.args = append(r.args, args)
	return &rivertype.JobInsertResult{Job: &rivertype.JobRow{}}, nil
}

func (r *recordingJobs) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.args)
}

// hostileWebhook delivers signed push and pull_request events whose branch
// names are the payloads. Each is either refused or acknowledged and queued
// for a job that treats the branch as data (a push only records a hint;
// sync lists heads itself). A forged signature over the same body queues
// nothing.
func hostileWebhook(t *testing.T, c *tally, payloads []string) {
	secret := []byte("security-test-webhook-secret")
	q := &recordingJobs{}
	h := webhook.New(webhook.Config{Store: storetest.NewSchema(t), Jobs: q, Secret: webhook.StaticSecret(secret), Logger: slog.New(slog.DiscardHandler)})
	n := 0
	deliver := func(event string, body []byte, sig string) int {
		n++
		req := httptest.NewRequest(http.MethodPost, "/webhooks/github", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", "security-"+strconv.Itoa(n))
		req.Header.Set("X-Hub-Signature-256", sig)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	repo := `"repository":{"id":1,"full_name":"acme/app","clone_url":"https://github.com/acme/app.git"},"installation":{"id":1},"sender":{"login":"mallory"}`
	for _, p := range payloads {
		bodies := map[string][]byte{
			"push": []byte(`{"ref":` + jsonString("refs/heads/"+p) + `,"after":"` + strings40("d") + `",` + repo + `}`),
			"pull_request": []byte(`{"action":"opened","number":7,"pull_request":{"number":7,"head":{"ref":` + jsonString(p) +
				`,"sha":"` + strings40("e") + `","repo":{"id":2,"full_name":"mallory/app"}},"base":{"ref":"main"},"user":{"login":"mallory"}},` + repo + `}`),
		}
		for event, body := range bodies {
			before := q.count()
			forged := deliver(event, body, webhook.SignatureHeader([]byte("wrong"), body))
			c.check(t, forged == http.StatusUnauthorized && q.count() == before, "forged %s with branch %q: status %d", event, p, forged)

			before = q.count()
			code := deliver(event, body, webhook.SignatureHeader(secret, body))
			queued := q.count() - before
			ok := code == http.StatusAccepted && queued == 1 ||
				(code == http.StatusBadRequest || code == http.StatusUnprocessableEntity) && queued == 0
			c.check(t, ok, "signed %s with branch %q: status %d", event, p, code)
		}
	}
	// Signed deliveries must have got through to the queue, or the table
	// only proved that signatures are checked.
	if got := q.count(); got < len(payloads) {
		t.Errorf("only %d signed deliveries were queued", got)
	}
}

func strings40(ch string) string {
	b := make([]byte, 40)
	for i := range b {
		b[i] = ch[0]
	}
	return string(b)
}
