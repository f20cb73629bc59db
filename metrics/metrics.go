package metrics

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry holds Slipway's collectors. Create one per process with New and
// pass it to whatever records; a nil *Registry records nothing.
type Registry struct {
	reg    *prometheus.Registry
	logger *slog.Logger

	deployments        *prometheus.CounterVec
	deploymentDuration *prometheus.HistogramVec
	jobWait            *prometheus.HistogramVec
	jobRun             *prometheus.HistogramVec
	gatewayRequests    *prometheus.CounterVec
	gatewayLatency     *prometheus.HistogramVec
	driftRepairs       *prometheus.CounterVec
	webhookDeliveries  *prometheus.CounterVec

	hosts          hostLimiter
	gatewayHandles gatewayRoutes
}

// MaxGatewayHosts bounds the distinct host labels of the gateway metrics;
// later hosts are counted under "other", so a flood of new wildcard names
// cannot grow the exposition without bound.
const MaxGatewayHosts = 2000

// Label values used when a caller has none.
const (
	HostUnmatched = "unmatched" // the request matched no route
	HostOther     = "other"     // past MaxGatewayHosts
)

// New creates a registry with Slipway's collectors and the Go runtime and
// process collectors. logger (nil: none) receives collection failures, such
// as the queue query failing during a scrape.
func New(logger *slog.Logger) *Registry {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Registry{
		reg:    prometheus.NewRegistry(),
		logger: logger,
		deployments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slipway_deployments_total",
			Help: "Deployments finished, by outcome (the deployment's final state).",
		}, []string{"outcome"}),
		deploymentDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "slipway_deployment_duration_seconds",
			Help:    "Time from a deployment's request to its outcome, by outcome.",
			Buckets: []float64{1, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 3600},
		}, []string{"outcome"}),
		jobWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "slipway_job_latency_seconds",
			Help:    "Time a River job waited between becoming available and a worker starting it, by kind.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"kind"}),
		jobRun: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "slipway_job_duration_seconds",
			Help:    "Time a River job's Work took, by kind and outcome (ok, error, snooze, cancel).",
			Buckets: []float64{.01, .1, .5, 1, 5, 10, 30, 60, 120, 300, 600, 1800},
		}, []string{"kind", "outcome"}),
		gatewayRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slipway_gateway_requests_total",
			Help: "Requests the gateway answered, by route hostname and status code.",
		}, []string{"host", "status"}),
		gatewayLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "slipway_gateway_request_duration_seconds",
			Help:    "Time the gateway took to answer, by route hostname.",
			Buckets: prometheus.DefBuckets,
		}, []string{"host"}),
		driftRepairs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slipway_reconcile_drift_repairs_total",
			Help: "Environments whose running state had drifted from their deployment and were rolled out again, by outcome.",
		}, []string{"outcome"}),
		webhookDeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "slipway_webhook_deliveries_total",
			Help: "GitHub webhook deliveries received, by event and outcome (accepted, ignored, rejected, failed).",
		}, []string{"event", "outcome"}),
		hosts: hostLimiter{seen: map[string]struct{}{}, max: MaxGatewayHosts},
	}
	r.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		r.deployments, r.deploymentDuration,
		r.jobWait, r.jobRun,
		r.gatewayRequests, r.gatewayLatency,
		r.driftRepairs, r.webhookDeliveries,
	)
	return r
}

// Gatherer exposes the registry, for tests and for adding it to another
// handler.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// ObserveDeployment records a finished deployment: its final state
// (succeeded, failed, cancelled, superseded, ...) and how long it took from
// request to outcome. Call it once per deployment, where the outcome is
// saved.
func (r *Registry) ObserveDeployment(outcome string, d time.Duration) {
	if r == nil {
		return
	}
	r.deployments.WithLabelValues(outcome).Inc()
	r.deploymentDuration.WithLabelValues(outcome).Observe(d.Seconds())
}

// ObserveJob records one River job attempt: its kind, how long it waited
// after becoming available (its latency), how long Work ran and how it
// ended (ok, error, snooze, cancel).
func (r *Registry) ObserveJob(kind string, wait, run time.Duration, outcome string) {
	if r == nil {
		return
	}
	r.jobWait.WithLabelValues(kind).Observe(max(wait, 0).Seconds())
	r.jobRun.WithLabelValues(kind, outcome).Observe(run.Seconds())
}

// ObserveGatewayRequest records one request the gateway answered. host must
// be the route's hostname as configured (a wildcard stays "*.example.com"),
// never the request's Host header, which a client chooses; "" means no
// route matched.
func (r *Registry) ObserveGatewayRequest(host string, status int, d time.Duration) {
	if r == nil {
		return
	}
	host = r.hosts.label(host)
	r.gatewayRequests.WithLabelValues(host, statusLabel(status)).Inc()
	r.gatewayLatency.WithLabelValues(host).Observe(d.Seconds())
}

// DriftRepaired records one drift repair of an environment, with its
// outcome (succeeded or failed).
func (r *Registry) DriftRepaired(outcome string) {
	if r == nil {
		return
	}
	r.driftRepairs.WithLabelValues(outcome).Inc()
}

// ObserveWebhookDelivery records one webhook delivery: GitHub's event name
// (push, pull_request, ...) and what became of it (accepted, ignored,
// rejected for a bad signature, failed).
func (r *Registry) ObserveWebhookDelivery(event, outcome string) {
	if r == nil {
		return
	}
	r.webhookDeliveries.WithLabelValues(event, outcome).Inc()
}

// QueueDepthFunc counts River's jobs, keyed by {queue, state}, such as
// {"default", "available"}: 17. The caller runs QueueDepthQuery on its pool.
type QueueDepthFunc func(ctx context.Context) (map[[2]string]int64, error)

// QueueDepthQuery is the query a QueueDepthFunc runs: one row per queue and
// state with its job count, scanned as (string, string, int64).
const QueueDepthQuery = `SELECT queue, state::text, count(*) FROM river_job GROUP BY queue, state`

// WatchQueue reports River's queue depth on every scrape through f, bounded
// by timeout. Call it once, in the process that serves /metrics.
func (r *Registry) WatchQueue(f QueueDepthFunc, timeout time.Duration) {
	if r == nil {
		return
	}
	r.reg.MustRegister(&queueCollector{count: f, timeout: timeout})
}

// riverStates are River's job states, reported as 0 when a queue has none
// in that state, so a drained queue's series drop to 0 rather than vanish.
var riverStates = []string{"available", "cancelled", "completed", "discarded", "pending", "retryable", "running", "scheduled"}

var queueDepthDesc = prometheus.NewDesc("slipway_river_jobs",
	"River jobs by queue and state, read from river_job at scrape time.", []string{"queue", "state"}, nil)

type queueCollector struct {
	count   QueueDepthFunc
	timeout time.Duration
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queueDepthDesc }

// Collect queries on every scrape: depth is only useful when current, and
// Prometheus already sets the pace. A failed query fails this metric alone.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueDepthDesc, err)
		return
	}
	queues := map[string]bool{}
	for k := range counts {
		queues[k[0]] = true
	}
	for q := range queues {
		for _, s := range riverStates {
			ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(counts[[2]string{q, s}]), q, s)
		}
	}
	// A state River adds later still shows up.
	for k, n := range counts {
		if !slices.Contains(riverStates, k[1]) {
			ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
		}
	}
}

// statusLabel keeps the status label to real HTTP codes.
func statusLabel(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status)
}

// hostLimiter admits the first max distinct hosts as labels. Reads take
// the shared lock: after warm-up every request finds its host already seen.
type hostLimiter struct {
	mu   sync.RWMutex
	seen map[string]struct{}
	max  int
}

func (h *hostLimiter) label(host string) string {
	if host == "" {
		return HostUnmatched
	}
	h.mu.RLock()
	_, ok := h.seen[host]
	h.mu.RUnlock()
	if ok {
		return host
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.seen[host]; ok {
		return host
	}
	if len(h.seen) >= h.max {
		return HostOther
	}
	h.seen[host] = struct{}{}
	return host
}
