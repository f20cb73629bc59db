package webhook_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/webhook"
)

// TestHandler_ControlCharactersRefused: a signed delivery whose names hold
// \u0000 (which Postgres refuses in jsonb) or another control character is
// answered 400, and nothing is stored or queued.
func TestHandler_ControlCharactersRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	tests := []struct {
		name, event, body string
	}{
		{"NUL in push ref", "push", `{"ref":"refs/heads/ma\u0000in","after":"` + strings.Repeat("d", 40) + `","repository":{"id":1,"full_name":"acme/notes"},"installation":{"id":77}}`},
		{"NUL in repository name", "push", `{"ref":"refs/heads/main","repository":{"id":1,"full_name":"acme/no\u0000tes"},"installation":{"id":77}}`},
		{"escape in head branch", "pull_request", `{"action":"opened","number":7,"pull_request":{"number":7,"head":{"ref":"x\u001b[31m","sha":"` + strings.Repeat("e", 40) + `"},"user":{"login":"wendy"}},"repository":{"id":1,"full_name":"acme/notes"},"installation":{"id":77}}`},
		{"NUL in action", "installation", `{"action":"dele\u0000ted","installation":{"id":77,"account":{"login":"acme","type":"Organization"}}}`},
		{"NUL in author", "pull_request", `{"action":"opened","number":7,"pull_request":{"number":7,"head":{"ref":"feature","sha":"` + strings.Repeat("e", 40) + `"},"user":{"login":"wen\u0000dy"}},"repository":{"id":1,"full_name":"acme/notes"},"installation":{"id":77}}`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.body)
			sig := webhook.SignatureHeader(b.secret, body)
			if code := b.postRaw(t, tt.event, "control-"+string(rune('a'+i)), bytes.NewReader(body), sig); code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", code)
			}
		})
	}
	if n := b.count(t, `SELECT count(*) FROM github_webhook_deliveries`) + b.count(t, `SELECT count(*) FROM river_job`); n != 0 {
		t.Fatalf("%d rows stored for refused deliveries", n)
	}
	// The same delivery without the control character is accepted, so the
	// refusals above are about the character, not the shape.
	body := []byte(strings.Replace(tests[0].body, `\u0000`, "", 1))
	if code := b.postRaw(t, "push", "control-ok", bytes.NewReader(body), webhook.SignatureHeader(b.secret, body)); code != http.StatusAccepted {
		t.Fatalf("clean push: status %d, want 202", code)
	}
}
