package sampler

import (
	"context"
	"sort"
	"time"

	"github.com/slipwayhq/slipway/runtime/usage"
	"github.com/slipwayhq/slipway/store"
)

// Range is a span the charts and the API show, read at Step resolution.
type Range struct {
	Name string
	Span time.Duration
	Step time.Duration
	// Rollup reads the 5-minute averages (and full resolution for the
	// minutes not averaged yet).
	Rollup bool
}

// Ranges are the spans offered, the default first.
var Ranges = []Range{
	{Name: "1h", Span: time.Hour, Step: Interval},
	{Name: "6h", Span: 6 * time.Hour, Step: time.Minute},
	{Name: "24h", Span: 24 * time.Hour, Step: RollupStep, Rollup: true},
	{Name: "7d", Span: 7 * 24 * time.Hour, Step: 30 * time.Minute, Rollup: true},
}

// ParseRange returns the range named s ("" is the default, 1h).
func ParseRange(s string) (Range, bool) {
	if s == "" {
		return Ranges[0], true
	}
	for _, r := range Ranges {
		if r.Name == s {
			return r, true
		}
	}
	return Range{}, false
}

// ServicePoint is a service's usage over one step; nil is unknown.
type ServicePoint struct {
	At       time.Time `json:"at"`
	CPU      *float64  `json:"cpu"`
	Memory   *float64  `json:"memory_bytes"`
	RX       *float64  `json:"rx_bytes_per_second"`
	TX       *float64  `json:"tx_bytes_per_second"`
	Restarts int       `json:"restarts"`
	Tasks    int       `json:"tasks"`
	Sampled  int       `json:"sampled_tasks"`
}

// RoutePoint is a route's traffic over one step.
type RoutePoint struct {
	At        time.Time `json:"at"`
	Requests  int64     `json:"requests"`
	PerSecond float64   `json:"requests_per_second"`
	Errors    int64     `json:"errors"`
	ErrorRate *float64  `json:"error_rate"`
	// P95 is the 95th percentile latency in milliseconds; nil without
	// requests.
	P95 *float64 `json:"p95_ms"`
}

// Series is an environment's usage over a range.
type Series struct {
	Range    string          `json:"range"`
	Step     int             `json:"step_seconds"`
	From     time.Time       `json:"from"`
	To       time.Time       `json:"to"`
	Services []ServiceSeries `json:"services"`
	Routes   []RouteSeries   `json:"routes"`
}

// ServiceSeries is one service's points, in time order.
type ServiceSeries struct {
	Name   string         `json:"name"`
	Points []ServicePoint `json:"points"`
}

// RouteSeries is one route's points, in time order.
type RouteSeries struct {
	Hostname string       `json:"hostname"`
	Points   []RoutePoint `json:"points"`
}

// Read returns the environment's usage over r, ending at now.
func Read(ctx context.Context, st *store.Store, teamID, environmentID string, r Range, now time.Time) (Series, error) {
	to := now.Truncate(Interval).Add(Interval)
	from := to.Add(-r.Span).Truncate(r.Step)
	out := Series{Range: r.Name, Step: int(r.Step / time.Second), From: from, To: to, Services: []ServiceSeries{}, Routes: []RouteSeries{}}
	// The 5-minute averages end where the sampler last rolled up; the
	// minutes after come from full resolution.
	cut := to
	if r.Rollup {
		cut = now.Add(-rollupDelay).Truncate(RollupStep)
	}
	var svc []store.ServicePoint
	var routes []store.RoutePoint
	for _, part := range []struct {
		from, to time.Time
		rollup   bool
	}{{from, cut, r.Rollup}, {cut, to, false}} {
		if !part.from.Before(part.to) {
			continue
		}
		s, err := st.ServiceUsage(ctx, teamID, environmentID, part.from, part.to, r.Step, part.rollup)
		if err != nil {
			return Series{}, err
		}
		svc = append(svc, s...)
		rt, err := st.RouteUsage(ctx, teamID, environmentID, part.from, part.to, part.rollup)
		if err != nil {
			return Series{}, err
		}
		routes = append(routes, rt...)
	}
	out.Services = services(svc)
	out.Routes = routeSeries(routes, r.Step)
	return out, nil
}

func services(points []store.ServicePoint) []ServiceSeries {
	byName := map[string]*ServiceSeries{}
	var names []string
	for _, p := range points {
		s := byName[p.Name]
		if s == nil {
			s = &ServiceSeries{Name: p.Name}
			byName[p.Name] = s
			names = append(names, p.Name)
		}
		if n := len(s.Points); n > 0 && !s.Points[n-1].At.Before(p.At) {
			continue // the averaged part already covers this step
		}
		s.Points = append(s.Points, ServicePoint{At: p.At, CPU: p.CPU, Memory: p.Memory, RX: p.RX, TX: p.TX,
			Restarts: p.Restarts, Tasks: p.Tasks, Sampled: p.Sampled})
	}
	sort.Strings(names)
	out := make([]ServiceSeries, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out
}

// routeSeries sums each route's samples per step and computes the rates
// and the p95 of each step from the summed histogram.
func routeSeries(points []store.RoutePoint, step time.Duration) []RouteSeries {
	type acc struct {
		req, errs int64
		lat       []int64
	}
	byName := map[string]map[time.Time]*acc{}
	for _, p := range points {
		m := byName[p.Name]
		if m == nil {
			m = map[time.Time]*acc{}
			byName[p.Name] = m
		}
		at := p.At.Truncate(step)
		a := m[at]
		if a == nil {
			a = &acc{lat: make([]int64, len(usage.LatencyBounds)+1)}
			m[at] = a
		}
		a.req += p.Requests
		a.errs += p.Errors
		for i := range min(len(a.lat), len(p.Latency)) {
			a.lat[i] += p.Latency[i]
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]RouteSeries, 0, len(names))
	for _, n := range names {
		rs := RouteSeries{Hostname: n}
		for at, a := range byName[n] {
			p := RoutePoint{At: at, Requests: a.req, Errors: a.errs, PerSecond: float64(a.req) / step.Seconds()}
			if a.req > 0 {
				rate := float64(a.errs) / float64(a.req)
				p.ErrorRate = &rate
			}
			if q, ok := usage.Quantile(0.95, a.lat); ok {
				ms := q * 1000
				p.P95 = &ms
			}
			rs.Points = append(rs.Points, p)
		}
		sort.Slice(rs.Points, func(i, j int) bool { return rs.Points[i].At.Before(rs.Points[j].At) })
		out = append(out, rs)
	}
	return out
}
