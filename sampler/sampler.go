package sampler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/runtime/usage"
	"github.com/slipwayhq/slipway/store"
)

// Interval is the time between samples (a slot).
const Interval = 15 * time.Second

// Retention of full-resolution samples and of 5-minute averages.
const (
	RawRetention    = 24 * time.Hour
	RollupRetention = 30 * 24 * time.Hour
	RollupStep      = 5 * time.Minute
)

// rollupDelay lets the samplers of other nodes finish a slot before the
// bucket holding it is averaged.
const rollupDelay = 2 * Interval

// Gateway is where the gateway's /metrics is read.
type Gateway struct {
	URL    string
	Token  string
	Client *http.Client
}

// Sampler samples usage; see the package doc. Build it with its fields
// and call Run.
type Sampler struct {
	Store *store.Store
	// Engine is the local Docker engine; nil samples no service (routes
	// and maintenance still run).
	Engine usage.Engine
	// Gateway is nil when no gateway metrics are configured.
	Gateway *Gateway
	// Notify tells destinations of unhealthy services, recoveries and
	// certificates; nil tells nobody.
	Notify *notify.Emitter
	Log    *slog.Logger
	// Owner names this worker in the scopes it holds; random when empty.
	Owner string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Every is the time between slots, at most Interval; zero is
	// Interval ([worker] usage_sample_seconds). The charts' finest step
	// stays Interval: shorter slots are averaged into it.
	Every time.Duration

	rates    usage.Rates
	lastPull *usage.Scrape
}

func (s *Sampler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sampler) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Run samples every Every (Interval by default) until ctx ends. One
// cycle's failure is logged and the next slot tried.
func (s *Sampler) Run(ctx context.Context) {
	if s.Owner == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		s.Owner = "sampler-" + hex.EncodeToString(b[:])
	}
	every := s.Every
	if every <= 0 || every > Interval {
		every = Interval
	}
	for {
		next := s.now().Truncate(every).Add(every)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		cctx, cancel := context.WithTimeout(ctx, every)
		if err := s.Cycle(cctx, next); err != nil && ctx.Err() == nil {
			s.log().WarnContext(ctx, "usage sample failed", "slot", next, "err", err)
		}
		cancel()
	}
}

// lease is how long a scope stays with its worker without a new slot.
const lease = 4 * Interval

// Cycle samples slot: this node's containers if this worker holds the
// node, the Swarm-wide counts, routes and maintenance if it holds the
// cluster. It is what Run calls every Interval; tests and the benchmark
// call it with slots of their own.
func (s *Sampler) Cycle(ctx context.Context, slot time.Time) error {
	byKey := map[store.SeriesKey]*store.ServiceSample{}
	at := func(k usage.ServiceKey) *store.ServiceSample {
		sk := store.SeriesKey{TeamID: k.TeamID, EnvironmentID: k.EnvironmentID, Kind: store.SeriesService, Name: k.Service}
		if byKey[sk] == nil {
			byKey[sk] = &store.ServiceSample{}
		}
		return byKey[sk]
	}
	var errs []error
	if s.Engine != nil {
		errs = append(errs, s.sampleNode(ctx, slot, at))
	}
	cluster, _, err := s.Store.ClaimMetricSlot(ctx, "cluster", s.Owner, slot, lease)
	if err != nil {
		return err
	}
	var routes map[store.SeriesKey]store.RouteSample
	if cluster {
		if s.Engine != nil {
			errs = append(errs, s.sampleCluster(ctx, slot, at))
		}
		var err error
		routes, err = s.sampleRoutes(ctx)
		errs = append(errs, err)
		errs = append(errs, s.maintain(ctx, slot))
	}
	errs = append(errs, s.write(ctx, slot, byKey, routes))
	return errors.Join(errs...)
}

// sampleNode reads this node's containers, when this worker holds the
// node's scope.
func (s *Sampler) sampleNode(ctx context.Context, slot time.Time, at func(usage.ServiceKey) *store.ServiceSample) error {
	node, err := usage.Node(ctx, s.Engine)
	if err != nil {
		return err
	}
	mine, _, err := s.Store.ClaimMetricSlot(ctx, "node:"+node, s.Owner, slot, lease)
	if err != nil || !mine {
		return err
	}
	readings, err := usage.LocalReadings(ctx, s.Engine)
	if err != nil {
		return err
	}
	for _, r := range s.rates.Next(readings) {
		x := at(r.Key)
		x.Sampled++
		x.Memory = addInt(x.Memory, int64(r.Memory))
		if r.Known {
			x.CPU, x.RX, x.TX = addReal(x.CPU, r.Cores), addReal(x.RX, r.RX), addReal(x.TX, r.TX)
		}
	}
	return nil
}

// sampleCluster reads every service's tasks from a manager and follows
// their health.
func (s *Sampler) sampleCluster(ctx context.Context, slot time.Time, at func(usage.ServiceKey) *store.ServiceSample) error {
	tasks, err := usage.ClusterTasks(ctx, s.Engine)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		x := at(t.Key)
		x.Tasks = int16(min(t.Running, 32767))
		x.Restarts = int32(t.Exited)
	}
	return s.followHealth(ctx, slot, tasks)
}

// sampleRoutes reads the gateway and returns what each route answered
// since the last read (nothing on the first).
func (s *Sampler) sampleRoutes(ctx context.Context) (map[store.SeriesKey]store.RouteSample, error) {
	if s.Gateway == nil {
		return nil, nil
	}
	client := s.Gateway.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	cur, err := usage.ScrapeGateway(ctx, client, s.Gateway.URL, s.Gateway.Token)
	if err != nil {
		return nil, err
	}
	prev := s.lastPull
	s.lastPull = &cur
	if prev == nil {
		return nil, nil
	}
	owners, err := s.Store.RouteOwners(ctx)
	if err != nil {
		return nil, err
	}
	out := map[store.SeriesKey]store.RouteSample{}
	for host, d := range usage.Deltas(*prev, cur) {
		o, ok := owners[host]
		if !ok {
			continue // unmatched, other, or a route gone since
		}
		lat := make([]int32, len(d.Latency))
		for i, n := range d.Latency {
			lat[i] = clamp32(n)
		}
		out[store.SeriesKey{TeamID: o.TeamID, EnvironmentID: o.EnvironmentID, Kind: store.SeriesRoute, Name: host}] =
			store.RouteSample{Requests: clamp32(d.Requests), Errors: clamp32(d.Errors), Latency: lat}
	}
	return out, nil
}

// write stores the slot's samples under their series.
func (s *Sampler) write(ctx context.Context, slot time.Time, services map[store.SeriesKey]*store.ServiceSample, routes map[store.SeriesKey]store.RouteSample) error {
	if len(services)+len(routes) == 0 {
		return nil
	}
	keys := make([]store.SeriesKey, 0, len(services)+len(routes))
	for k := range services {
		keys = append(keys, k)
	}
	for k := range routes {
		keys = append(keys, k)
	}
	ids, err := s.Store.EnsureMetricSeries(ctx, keys)
	if err != nil {
		return err
	}
	var svc []store.ServiceSample
	for k, x := range services {
		if id, ok := ids[k]; ok {
			x.SeriesID = id
			svc = append(svc, *x)
		}
	}
	var rts []store.RouteSample
	for k, x := range routes {
		if id, ok := ids[k]; ok {
			x.SeriesID = id
			rts = append(rts, x)
		}
	}
	if err := s.Store.AddServiceSamples(ctx, slot, svc); err != nil {
		return err
	}
	return s.Store.AddRouteSamples(ctx, slot, rts)
}

// maintain rolls up finished 5-minute buckets, deletes what is past its
// retention and checks certificates, once per bucket.
func (s *Sampler) maintain(ctx context.Context, slot time.Time) error {
	bucket := slot.Add(-rollupDelay).Truncate(RollupStep)
	mine, prev, err := s.Store.ClaimMetricSlot(ctx, "rollup", s.Owner, bucket, lease+RollupStep)
	if err != nil || !mine {
		return err
	}
	from := prev
	if from.IsZero() || bucket.Sub(from) > RawRetention {
		from = bucket.Add(-RollupStep)
	}
	var errs []error
	errs = append(errs, s.Store.RollupMetrics(ctx, from, bucket))
	errs = append(errs, s.Store.PruneMetrics(ctx, slot.Add(-RawRetention), slot.Add(-RollupRetention)))
	errs = append(errs, s.checkCertificates(ctx, slot))
	if _, err := s.Store.PruneNotificationDeliveries(ctx, slot.Add(-RollupRetention)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func addReal(p *float32, v float64) *float32 {
	x := float32(v)
	if p != nil {
		x += *p
	}
	return &x
}

func addInt(p *int64, v int64) *int64 {
	if p != nil {
		v += *p
	}
	return &v
}

func clamp32(n uint64) int32 {
	if n > 1<<31-1 {
		return 1<<31 - 1
	}
	return int32(n)
}

// unhealthyReason says why a service counts as unhealthy.
func unhealthyReason(t usage.ServiceTasks) string {
	if t.Reason != "" {
		return t.Reason
	}
	return fmt.Sprintf("%d of %d tasks running", t.Running, t.Desired)
}
