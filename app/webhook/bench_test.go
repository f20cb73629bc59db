package webhook_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/webhook"
)

// BenchmarkIntake posts 1,000 signed pull_request deliveries from 20
// concurrent clients to the intake on a real listener and real Postgres,
// and prints the p99 response time and the jobs enqueued (target: p99
// under 50 ms, 1,000 jobs). Each iteration posts two bursts and prints
// both: the first right after start, while the client's connections and
// the database pool are still being opened (a serve that has just
// started), and the second in steady state, which the target is about.
// Run: go test -run '^$' -bench Intake -benchtime 1x ./app/webhook/
func BenchmarkIntake(b *testing.B) {
	const deliveries, clients = 1000, 20
	bb := setup(b, false)
	f := loadFixture(b, "pull_request_synchronize")
	httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	burst := 0
	post := func(label string) time.Duration {
		burst++
		tag := fmt.Sprintf("bench-%d", burst)
		type req struct {
			id   string
			body []byte
			sig  string
		}
		reqs := make(chan req, deliveries)
		for i := range deliveries {
			// Distinct head commits, as a busy repository would send.
			body := bytes.Replace(f.body, []byte(strings.Repeat("b", 40)), fmt.Appendf(nil, "%040x", burst*deliveries+i), 1)
			reqs <- req{id: fmt.Sprintf("%s-%d", tag, i), body: body, sig: webhook.SignatureHeader(bb.secret, body)}
		}
		close(reqs)
		var mu sync.Mutex
		var lat []time.Duration
		failures := 0
		var wg sync.WaitGroup
		start := time.Now()
		for range clients {
			wg.Go(func() {
				for r := range reqs {
					hr, _ := http.NewRequest(http.MethodPost, bb.url, bytes.NewReader(r.body))
					hr.Header.Set("X-GitHub-Event", "pull_request")
					hr.Header.Set("X-GitHub-Delivery", r.id)
					hr.Header.Set("X-Hub-Signature-256", r.sig)
					t0 := time.Now()
					resp, err := httpClient.Do(hr)
					d := time.Since(t0)
					mu.Lock()
					lat = append(lat, d)
					if err != nil || resp.StatusCode != http.StatusAccepted {
						failures++
					}
					mu.Unlock()
					if err == nil {
						_ = resp.Body.Close()
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		slices.Sort(lat)
		p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
		jobsN := bb.count(b, `SELECT count(*) FROM river_job WHERE kind = 'github_pull_request' AND args->>'delivery_id' LIKE $1`, tag+"-%")
		fmt.Printf("webhook intake (%s): %d deliveries, %d clients, %v total (%.0f/s): p50 %v, p99 %v, max %v; %d jobs enqueued, %d failed requests (target p99 < 50ms)\n",
			label, deliveries, clients, elapsed.Round(time.Millisecond), float64(deliveries)/elapsed.Seconds(),
			p(0.50).Round(time.Microsecond), p(0.99).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond), jobsN, failures)
		if jobsN != deliveries || failures != 0 {
			b.Errorf("%s burst: %d jobs enqueued and %d failed requests for %d deliveries", label, jobsN, failures, deliveries)
		}
		return p(0.99)
	}
	for b.Loop() {
		if burst == 0 {
			post("first burst after start")
		}
		b.ReportMetric(float64(post("steady state").Microseconds())/1000, "p99_ms")
	}
}
