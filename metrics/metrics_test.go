package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/riverqueue/river/rivertype"
)

func TestRegistry_Handler(t *testing.T) {
	t.Parallel()
	r := New(nil)
	r.ObserveDeployment("succeeded", 42*time.Second)
	srv := httptest.NewServer(r.Handler("s3cret-token"))
	t.Cleanup(srv.Close)
	off := httptest.NewServer(r.Handler(""))
	t.Cleanup(off.Close)

	tests := []struct {
		name       string
		url        string
		auth       string
		wantStatus int
	}{
		{"no token configured", off.URL, "Bearer s3cret-token", http.StatusNotFound},
		{"no token configured, no header", off.URL, "", http.StatusNotFound},
		{"missing header", srv.URL, "", http.StatusUnauthorized},
		{"wrong token", srv.URL, "Bearer s3cret-tokem", http.StatusUnauthorized},
		{"prefix of the token", srv.URL, "Bearer s3cret", http.StatusUnauthorized},
		{"token with a suffix", srv.URL, "Bearer s3cret-token2", http.StatusUnauthorized},
		{"basic scheme", srv.URL, "Basic s3cret-token", http.StatusUnauthorized},
		{"bearer without token", srv.URL, "Bearer ", http.StatusUnauthorized},
		{"right token", srv.URL, "Bearer s3cret-token", http.StatusOK},
		{"scheme is case-insensitive", srv.URL, "bearer s3cret-token", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, tt.url+"/metrics", nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			switch tt.wantStatus {
			case http.StatusOK:
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
					t.Errorf("Content-Type %q", ct)
				}
				for _, want := range []string{
					`slipway_deployments_total{outcome="succeeded"} 1`,
					`slipway_deployment_duration_seconds_count{outcome="succeeded"} 1`,
					`slipway_deployment_duration_seconds_sum{outcome="succeeded"} 42`,
					`go_goroutines`,
				} {
					if !strings.Contains(string(body), want) {
						t.Errorf("exposition lacks %q", want)
					}
				}
			case http.StatusUnauthorized:
				if resp.Header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
				if strings.Contains(string(body), "slipway_") {
					t.Error("401 leaked metrics")
				}
			}
		})
	}
}

func TestRegistry_Observe(t *testing.T) {
	t.Parallel()
	r := New(nil)
	r.ObserveDeployment("succeeded", time.Second)
	r.ObserveDeployment("succeeded", 3*time.Second)
	r.ObserveDeployment("failed", time.Minute)
	r.ObserveJob("deploy", 250*time.Millisecond, 2*time.Second, "ok")
	r.ObserveJob("deploy", -time.Second, time.Second, "snooze") // clock skew counts as 0
	r.DriftRepaired("succeeded")
	r.DriftRepaired("succeeded")
	r.ObserveWebhookDelivery("push", "accepted")
	r.ObserveWebhookDelivery("pull_request", "rejected")

	counters := []struct {
		name string
		got  float64
		want float64
	}{
		{"deployments succeeded", testutil.ToFloat64(r.deployments.WithLabelValues("succeeded")), 2},
		{"deployments failed", testutil.ToFloat64(r.deployments.WithLabelValues("failed")), 1},
		{"drift repairs", testutil.ToFloat64(r.driftRepairs.WithLabelValues("succeeded")), 2},
		{"webhook push", testutil.ToFloat64(r.webhookDeliveries.WithLabelValues("push", "accepted")), 1},
		{"webhook rejected", testutil.ToFloat64(r.webhookDeliveries.WithLabelValues("pull_request", "rejected")), 1},
	}
	for _, c := range counters {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	err := testutil.CollectAndCompare(r.jobWait, strings.NewReader(`
# HELP slipway_job_latency_seconds Time a River job waited between becoming available and a worker starting it, by kind.
# TYPE slipway_job_latency_seconds histogram
slipway_job_latency_seconds_bucket{kind="deploy",le="0.01"} 1
slipway_job_latency_seconds_bucket{kind="deploy",le="0.05"} 1
slipway_job_latency_seconds_bucket{kind="deploy",le="0.1"} 1
slipway_job_latency_seconds_bucket{kind="deploy",le="0.25"} 2
slipway_job_latency_seconds_bucket{kind="deploy",le="0.5"} 2
slipway_job_latency_seconds_bucket{kind="deploy",le="1"} 2
slipway_job_latency_seconds_bucket{kind="deploy",le="2.5"} 2
slipway_job_latency_seconds_bucket{kind="deploy",le="5"} 2
slipway_job_latency_seconds_bucket{kind="deploy",le="10"} 2
slipway_job_latency_seconds_bucket{kind="deploy",le="30"} 2
slipway_job_latency_seconds_bucket{kind="deploy",le="60"} 2
slipway_job_latency_seconds_bucket{kind="deploy",le="300"} 2
slipway_job_latency_seconds_bucket{kind="deploy",le="+Inf"} 2
slipway_job_latency_seconds_sum{kind="deploy"} 0.25
slipway_job_latency_seconds_count{kind="deploy"} 2
`))
	if err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(r.jobRun); n != 2 {
		t.Errorf("job duration series = %d, want 2 (ok and snooze)", n)
	}
	if problems, err := testutil.GatherAndLint(r.reg); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %v", problems, err)
	}
}

func TestRegistry_ObserveGatewayRequest(t *testing.T) {
	t.Parallel()
	r := New(nil)
	r.hosts.max = 2
	r.ObserveGatewayRequest("a.example.com", 200, 10*time.Millisecond)
	r.ObserveGatewayRequest("a.example.com", 502, time.Second)
	r.ObserveGatewayRequest("*.tenants.example.com", 200, time.Millisecond)
	r.ObserveGatewayRequest("c.example.com", 200, time.Millisecond) // past the limit
	r.ObserveGatewayRequest("", 404, time.Millisecond)
	r.ObserveGatewayRequest("a.example.com", 0, time.Millisecond) // connection aborted before a status

	err := testutil.CollectAndCompare(r.gatewayRequests, strings.NewReader(`
# HELP slipway_gateway_requests_total Requests the gateway answered, by route hostname and status code.
# TYPE slipway_gateway_requests_total counter
slipway_gateway_requests_total{host="*.tenants.example.com",status="200"} 1
slipway_gateway_requests_total{host="a.example.com",status="200"} 1
slipway_gateway_requests_total{host="a.example.com",status="502"} 1
slipway_gateway_requests_total{host="a.example.com",status="other"} 1
slipway_gateway_requests_total{host="other",status="200"} 1
slipway_gateway_requests_total{host="unmatched",status="404"} 1
`))
	if err != nil {
		t.Error(err)
	}
	if got := testutil.CollectAndCount(r.gatewayLatency); got != 4 {
		t.Errorf("latency series = %d, want 4 (a, wildcard, other, unmatched)", got)
	}
}

func TestRegistry_WatchQueue(t *testing.T) {
	t.Parallel()
	r := New(nil)
	var hadDeadline bool
	r.WatchQueue(func(ctx context.Context) (map[[2]string]int64, error) {
		_, hadDeadline = ctx.Deadline()
		return map[[2]string]int64{
			{"default", "available"}: 3,
			{"default", "running"}:   1,
			{"builds", "scheduled"}:  2,
			{"builds", "paused"}:     1, // a state this package does not know yet
		}, nil
	}, time.Second)

	var want bytes.Buffer
	want.WriteString("# HELP slipway_river_jobs River jobs by queue and state, read from river_job at scrape time.\n# TYPE slipway_river_jobs gauge\n")
	for _, q := range []string{"builds", "default"} {
		for _, s := range []string{"available", "cancelled", "completed", "discarded", "paused", "pending", "retryable", "running", "scheduled"} {
			n := map[string]string{"default/available": "3", "default/running": "1", "builds/scheduled": "2", "builds/paused": "1"}[q+"/"+s]
			if n == "" {
				if s == "paused" {
					continue
				}
				n = "0"
			}
			want.WriteString(`slipway_river_jobs{queue="` + q + `",state="` + s + `"} ` + n + "\n")
		}
	}
	if err := testutil.GatherAndCompare(r.reg, &want, "slipway_river_jobs"); err != nil {
		t.Error(err)
	}
	if !hadDeadline {
		t.Error("the queue query must run under a deadline")
	}
}

func TestRegistry_WatchQueueFailureKeepsOtherMetrics(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	r := New(slog.New(slog.NewTextHandler(&logs, nil)))
	r.ObserveDeployment("failed", time.Second)
	r.WatchQueue(func(context.Context) (map[[2]string]int64, error) {
		return nil, errors.New("connection refused")
	}, time.Second)

	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer t")
	r.Handler("t").ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `slipway_deployments_total{outcome="failed"} 1`) {
		t.Errorf("status %d; body:\n%s", rec.Code, rec.Body.String())
	}
	if strings.Contains(rec.Body.String(), "slipway_river_jobs{") {
		t.Error("a failed query must not report depths")
	}
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("the failure was not logged: %q", logs.String())
	}
}

func TestRegistry_Nil(t *testing.T) {
	t.Parallel()
	var r *Registry
	r.ObserveDeployment("succeeded", time.Second)
	r.ObserveJob("deploy", 0, 0, "ok")
	r.ObserveGatewayRequest("a", 200, 0)
	r.DriftRepaired("succeeded")
	r.ObserveWebhookDelivery("push", "accepted")
	r.WatchQueue(nil, time.Second)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer t")
	r.Handler("t").ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil registry: status %d, want 404", rec.Code)
	}
}

func BenchmarkObserveGatewayRequest(b *testing.B) {
	r := New(nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.ObserveGatewayRequest("app.example.com", 200, time.Millisecond)
		}
	})
}

func TestRegistry_RiverMiddleware(t *testing.T) {
	t.Parallel()
	r := New(nil)
	mw := r.RiverMiddleware()
	scheduled := time.Now().Add(-3 * time.Second)
	attempted := scheduled.Add(2 * time.Second)
	for _, inner := range []error{
		nil,
		errors.New("boom"),
		&rivertype.JobSnoozeError{Duration: time.Second},
		fmt.Errorf("wrapped: %w", &rivertype.JobCancelError{}),
	} {
		job := &rivertype.JobRow{Kind: "deploy", ScheduledAt: scheduled, AttemptedAt: &attempted}
		err := mw.Work(t.Context(), job, func(context.Context) error { return inner })
		if err != inner {
			t.Errorf("middleware changed the error: %v -> %v", inner, err)
		}
	}
	if n := testutil.CollectAndCount(r.jobRun, "slipway_job_duration_seconds"); n != 4 {
		t.Fatalf("job duration series = %d, want 4", n)
	}
	for _, outcome := range []string{"ok", "error", "snooze", "cancel"} {
		if got := histogramCount(t, r, "slipway_job_duration_seconds", map[string]string{"kind": "deploy", "outcome": outcome}); got != 1 {
			t.Errorf("outcome %s observed %d times, want 1", outcome, got)
		}
	}
	if got := histogramSum(t, r, "slipway_job_latency_seconds", map[string]string{"kind": "deploy"}); got != 8 {
		t.Errorf("latency sum = %v, want 4 attempts x 2s", got)
	}
}

// histogramCount and histogramSum read one series of a histogram family.
func histogramCount(t *testing.T, r *Registry, name string, labels map[string]string) uint64 {
	return histogramSeries(t, r, name, labels).GetSampleCount()
}

func histogramSum(t *testing.T, r *Registry, name string, labels map[string]string) float64 {
	return histogramSeries(t, r, name, labels).GetSampleSum()
}

func histogramSeries(t *testing.T, r *Registry, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	families, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if labels[lp.GetName()] != lp.GetValue() {
					continue series
				}
			}
			return m.GetHistogram()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return nil
}
