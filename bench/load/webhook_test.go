package load

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/webhook"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// redeliverEvery is how often a delivery is sent a second time, as GitHub
// does when it missed an answer: it must be answered and not processed
// again.
const redeliverEvery = 10

// webhookStats is what a run of deliveries measured.
type webhookStats struct {
	sent, redelivered int
	offered           float64 // deliveries a second actually sent
	ackP50, ackP99    time.Duration
	sendWall, drained time.Duration
}

// deliverPushes posts signed push deliveries to serve's GitHub intake at
// rate a second for d, every redeliverEvery-th one twice, and waits for
// the worker to process them. It fails unless every delivery was
// acknowledged (202 the first time, 200 duplicate the second), recorded,
// processed, and processed exactly once: one github_push job and one
// branch_push_hint event per delivery.
func deliverPushes(tb testing.TB, rate int, d time.Duration) webhookStats {
	tb.Helper()
	ctx := context.Background()
	fake := githubtest.New(tb)
	r := newRig(tb, chaostest.GitHubEnv(tb, fake)...)
	id := swarmtest.ID()
	team := chaostest.NewTeam(tb, r.st, id)
	const installation, repoID = 9101, 9102
	fullName := "acme/load-" + id
	if _, err := r.st.UpsertGitHubInstallation(ctx, installation, "acme", "Organization"); err != nil {
		tb.Fatal(err)
	}
	if _, err := r.st.BindGitHubInstallation(ctx, team.Team.ID, installation, team.User.ID); err != nil {
		tb.Fatal(err)
	}
	app, err := r.st.CreateApplication(ctx, team.Team.ID, "hooks-"+id)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := r.st.LinkGitHubRepository(ctx, team.Team.ID, app.ID, installation, repoID, fullName); err != nil {
		tb.Fatal(err)
	}

	total := rate * int(d/time.Second)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(n int) (int, error) {
		body := fmt.Appendf(nil, `{"ref":"refs/heads/b%d","after":"%040x","installation":{"id":%d},"repository":{"id":%d,"full_name":%q}}`,
			n, n, installation, repoID, fullName)
		req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/webhooks/github", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("load-%s-%d", id, n))
		req.Header.Set("X-Hub-Signature-256", webhook.SignatureHeader([]byte(fake.WebhookSecret), body))
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	var mu sync.Mutex
	var acks []time.Duration
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 10 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	redelivered := 0
	for n := range total {
		// On schedule: a send that falls behind is caught up at once, so
		// the offered rate holds on average.
		time.Sleep(time.Until(start.Add(time.Duration(n) * time.Second / time.Duration(rate))))
		resend := n%redeliverEvery == 0
		if resend {
			redelivered++
		}
		wg.Go(func() {
			t0 := time.Now()
			status, err := post(n)
			took := time.Since(t0)
			if err != nil || status != http.StatusAccepted {
				fail("delivery %d: status %d, %v", n, status, err)
				return
			}
			mu.Lock()
			acks = append(acks, took)
			mu.Unlock()
			if resend {
				if status, err := post(n); err != nil || status != http.StatusOK {
					fail("redelivery %d: status %d, %v, want 200 duplicate", n, status, err)
				}
			}
		})
	}
	offered := float64(total) / time.Since(start).Seconds()
	wg.Wait()
	sendWall := time.Since(start)
	if len(failures) > 0 {
		tb.Fatalf("%d of %d deliveries not acknowledged; first: %v", total-len(acks), total, failures)
	}

	// Processed: every delivery marked, then counted once each.
	var recorded, processed int
	chaostest.WaitFor(tb, 5*time.Minute, "the worker to process every delivery", func() bool {
		if err := r.pool.QueryRow(ctx, `SELECT count(*), count(processed_at) FROM github_webhook_deliveries
			WHERE delivery_id LIKE $1`, "load-"+id+"-%").Scan(&recorded, &processed); err != nil {
			tb.Fatal(err)
		}
		return processed == total
	})
	drained := time.Since(start)
	var jobsN, jobsDone, hints, distinct int
	if err := r.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state = 'completed') FROM river_job
		WHERE kind = 'github_push' AND args->>'delivery_id' LIKE $1`, "load-"+id+"-%").Scan(&jobsN, &jobsDone); err != nil {
		tb.Fatal(err)
	}
	if err := r.pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT details->>'delivery_id') FROM events
		WHERE team_id = $1 AND verb = 'branch_push_hint'`, team.Team.ID).Scan(&hints, &distinct); err != nil {
		tb.Fatal(err)
	}
	if recorded != total || jobsN != total || hints != total || distinct != total {
		tb.Fatalf("%d deliveries sent (%d twice): %d recorded, %d processed, %d push jobs (%d completed), %d push hints for %d distinct deliveries; want %d of each",
			total, redelivered, recorded, processed, jobsN, jobsDone, hints, distinct, total)
	}
	slices.Sort(acks)
	s := webhookStats{sent: total, redelivered: redelivered, offered: offered, ackP50: percentile(acks, 0.5), ackP99: percentile(acks, 0.99), sendWall: sendWall, drained: drained}
	fmt.Printf("bench/load: %d push deliveries at %d/s (%.0f/s achieved; %d redelivered) all answered in %s: acknowledged p50 %s, p99 %s; all processed once after %s (%.0f deliveries/s end to end)\n",
		total, rate, offered, redelivered, sendWall.Round(time.Millisecond), s.ackP50.Round(time.Microsecond), s.ackP99.Round(time.Microsecond),
		drained.Round(time.Millisecond), float64(total)/drained.Seconds())
	return s
}

// TestLoadWebhooks is the short form `make test` runs: 200 deliveries a
// second for 5 s.
func TestLoadWebhooks(t *testing.T) {
	t.Parallel()
	s := deliverPushes(t, 200, 5*time.Second)
	summary.Line(t, "load: %d webhook deliveries at 200/s (%.0f/s achieved, +%d redeliveries): all acknowledged (p99 %s), all processed exactly once",
		s.sent, s.offered, s.redelivered, s.ackP99.Round(time.Millisecond))
}

// BenchmarkLoadWebhooks is the full form: 200 deliveries a second for 30 s.
func BenchmarkLoadWebhooks(b *testing.B) {
	for b.Loop() {
		s := deliverPushes(b, 200, 30*time.Second)
		b.ReportMetric(float64(s.ackP99.Microseconds())/1000, "ack_p99_ms")
		b.ReportMetric(float64(s.sent)/s.drained.Seconds(), "processed/s")
	}
}
