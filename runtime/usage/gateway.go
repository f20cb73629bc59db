package usage

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The gateway's series (package metrics names them).
const (
	gatewayRequests = "slipway_gateway_requests_total"
	gatewayLatency  = "slipway_gateway_request_duration_seconds"
)

// LatencyBounds are the upper bounds, in seconds, of the latency buckets
// Slipway stores: the gateway's histogram buckets (Prometheus' defaults).
// A stored histogram has one more bucket, for slower answers.
var LatencyBounds = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// RouteCounters are one route's counters in one scrape, cumulative since
// the gateway started.
type RouteCounters struct {
	Requests uint64
	Errors   uint64 // 5xx
	// Latency counts answers at or under each of LatencyBounds, then all.
	Latency []uint64
}

// Scrape is one read of the gateway's /metrics: counters by route
// hostname as configured (wildcards stay "*.example.com").
type Scrape struct {
	At     time.Time
	Routes map[string]RouteCounters
}

// ScrapeGateway reads the gateway's /metrics at url with the bearer token.
func ScrapeGateway(ctx context.Context, client *http.Client, url, token string) (Scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Scrape{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/plain")
	resp, err := client.Do(req)
	if err != nil {
		return Scrape{}, fmt.Errorf("scrape gateway metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return Scrape{}, fmt.Errorf("scrape gateway metrics: %s answered %s", url, resp.Status)
	}
	return ParseGateway(resp.Body, time.Now())
}

// ParseGateway reads the gateway's series from the Prometheus text format.
func ParseGateway(r io.Reader, at time.Time) (Scrape, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return Scrape{}, fmt.Errorf("parse gateway metrics: %w", err)
	}
	s := Scrape{At: at, Routes: map[string]RouteCounters{}}
	if f := families[gatewayRequests]; f != nil {
		for _, m := range f.GetMetric() {
			host, status := label(m, "host"), label(m, "status")
			rc := s.Routes[host]
			n := uint64(m.GetCounter().GetValue())
			rc.Requests += n
			if code, err := strconv.Atoi(status); err == nil && code >= 500 && code <= 599 {
				rc.Errors += n
			}
			s.Routes[host] = rc
		}
	}
	if f := families[gatewayLatency]; f != nil {
		for _, m := range f.GetMetric() {
			host := label(m, "host")
			rc := s.Routes[host]
			rc.Latency = histogram(m.GetHistogram())
			s.Routes[host] = rc
		}
	}
	return s, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// histogram maps a Prometheus histogram's cumulative buckets onto
// LatencyBounds (a bucket of another bound counts toward the next bound
// of ours at or above it), cumulative, with the total last.
func histogram(h *dto.Histogram) []uint64 {
	out := make([]uint64, len(LatencyBounds)+1)
	for _, b := range h.GetBucket() {
		i, _ := slices.BinarySearch(LatencyBounds, b.GetUpperBound())
		if math.IsInf(b.GetUpperBound(), 1) {
			i = len(LatencyBounds)
		}
		for j := i; j < len(out); j++ {
			out[j] = max(out[j], b.GetCumulativeCount())
		}
	}
	out[len(LatencyBounds)] = max(out[len(LatencyBounds)], h.GetSampleCount())
	return out
}

// RouteDelta is what a route answered between two scrapes.
type RouteDelta struct {
	Requests uint64
	Errors   uint64
	// Latency counts answers per bucket (not cumulative): one per
	// LatencyBounds, then the slower ones.
	Latency []uint64
}

// Deltas returns each route's answers between prev and cur. A route new
// in cur, or whose counters went down (the gateway restarted), counts
// from zero: its counters are what it answered since.
func Deltas(prev, cur Scrape) map[string]RouteDelta {
	out := map[string]RouteDelta{}
	for host, c := range cur.Routes {
		p, ok := prev.Routes[host]
		if !ok || c.Requests < p.Requests || !monotonic(p.Latency, c.Latency) {
			p = RouteCounters{}
		}
		d := RouteDelta{Requests: c.Requests - p.Requests, Errors: c.Errors - min(p.Errors, c.Errors), Latency: make([]uint64, len(LatencyBounds)+1)}
		var below uint64
		for i := range d.Latency {
			var cum, pcum uint64
			if i < len(c.Latency) {
				cum = c.Latency[i]
			}
			if i < len(p.Latency) {
				pcum = p.Latency[i]
			}
			n := cum - min(pcum, cum)
			d.Latency[i] = n - min(below, n)
			below = n
		}
		out[host] = d
	}
	return out
}

func monotonic(prev, cur []uint64) bool {
	for i := range min(len(prev), len(cur)) {
		if cur[i] < prev[i] {
			return false
		}
	}
	return true
}

// Quantile estimates the q-quantile (0.95 for p95) in seconds of answers
// counted per bucket, interpolating linearly within a bucket as
// Prometheus does; answers slower than the last bound count as that
// bound. It returns false when there are none.
func Quantile(q float64, buckets []int64) (float64, bool) {
	var total int64
	for _, n := range buckets {
		total += n
	}
	if total == 0 {
		return 0, false
	}
	rank := q * float64(total)
	var seen int64
	for i, n := range buckets {
		if n == 0 || float64(seen+n) < rank {
			seen += n
			continue
		}
		if i >= len(LatencyBounds) {
			return LatencyBounds[len(LatencyBounds)-1], true
		}
		lower := 0.0
		if i > 0 {
			lower = LatencyBounds[i-1]
		}
		return lower + (LatencyBounds[i]-lower)*(rank-float64(seen))/float64(n), true
	}
	return LatencyBounds[len(LatencyBounds)-1], true
}
