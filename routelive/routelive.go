package routelive

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// Reports reads what the gateways last reported: *store.Store.
type Reports interface {
	ListGatewayReports(ctx context.Context, since time.Time) ([]store.GatewayReport, error)
}

const (
	// DefaultWait bounds WaitRouteLive when its caller gives no bound:
	// the table reaches the gateway within about a second (serve polls
	// the store every second, the gateway long-polls serve), and a new
	// task usually accepts connections by the time its health check
	// passed.
	DefaultWait = 30 * time.Second
	// StaleAfter is how long a gateway's last report counts: gateways
	// report at once on every change and repeat an unchanged report every
	// 5 minutes, so one silent for longer is gone (or cut off from the
	// control plane) and not waited for.
	StaleAfter = 15 * time.Minute
	// NoGatewayWait bounds the wait while no gateway has reported within
	// StaleAfter: a gateway just started reports as soon as it has its
	// first table; otherwise none runs (or it predates the reports).
	NoGatewayWait = 5 * time.Second
	// pollEvery is how often the reports are read again.
	pollEvery = 200 * time.Millisecond
)

// NotLiveError is what WaitRouteLive returns when its bound passed: what
// was still missing, to be left as a warning on the deployment.
type NotLiveError struct {
	Version   int64
	Hostnames []string
	Waited    time.Duration
	// Missing says, per gateway, what it lacked when the wait ended.
	Missing []string
}

func (e *NotLiveError) Error() string {
	return fmt.Sprintf("routes %s not live on the gateway after %s (route table version %d): %s (routes_not_live)",
		strings.Join(e.Hostnames, ", "), e.Waited.Round(time.Second), e.Version, strings.Join(e.Missing, "; "))
}

// WaitRouteLive waits until every gateway that reported within StaleAfter
// serves route table version `version` or a later one and can serve each
// of hostnames (route hostnames as deployed: exact names or "*." wildcards;
// a redirect counts at once, a backend route once a connection to one of
// its tasks was made), and returns nil. Call it after the routes were set,
// with the version store.RouteTableVersion read then.
//
// After wait (DefaultWait when zero or negative) it returns a
// *NotLiveError saying what was missing; the routes are set and will be
// served as soon as the gateway gets there, so callers record it as a
// warning rather than fail the deployment. No gateway having reported
// within StaleAfter is such an error after NoGatewayWait at most. When ctx ends first it returns ctx.Err(); an
// error reading the reports is returned at once.
func WaitRouteLive(ctx context.Context, r Reports, version int64, hostnames []string, wait time.Duration) error {
	if wait <= 0 {
		wait = DefaultWait
	}
	want := make([]string, 0, len(hostnames))
	for _, h := range hostnames {
		want = append(want, store.NormalizeHostname(h))
	}
	slices.Sort(want)
	want = slices.Compact(want)
	start := time.Now()
	var lacking []string
	noGateway := false
	expired, err := poll(ctx, wait, func(waited time.Duration) (bool, error) {
		reports, err := r.ListGatewayReports(ctx, time.Now().Add(-StaleAfter))
		if err != nil {
			return false, fmt.Errorf("wait for routes to be live: %w", err)
		}
		if lacking = missing(reports, version, want); len(lacking) == 0 {
			return true, nil
		}
		// No gateway is there to wait for (none runs, or none reports:
		// one made before the reports).
		noGateway = len(reports) == 0 && waited >= min(wait, NoGatewayWait)
		return noGateway, nil
	})
	if err != nil {
		return err
	}
	if expired || noGateway {
		return &NotLiveError{Version: version, Hostnames: want, Waited: time.Since(start), Missing: lacking}
	}
	return nil
}

// poll calls check at once and then every pollEvery until it is done or
// fails, ctx ends (ctx.Err()) or wait passes (expired); check is told how
// long the wait has lasted.
func poll(ctx context.Context, wait time.Duration, check func(waited time.Duration) (bool, error)) (expired bool, err error) {
	start := time.Now()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if done, err := check(time.Since(start)); done || err != nil {
			return false, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-deadline.C:
			return true, nil
		case <-tick.C:
		}
	}
}

// missing says what each gateway lacks: the version, or hostnames.
func missing(reports []store.GatewayReport, version int64, want []string) []string {
	if len(reports) == 0 {
		return []string{"no gateway has reported the routes it serves"}
	}
	var out []string
	for _, g := range reports {
		if g.TableVersion < version {
			out = append(out, fmt.Sprintf("gateway %s serves route table version %d", g.Gateway, g.TableVersion))
			continue
		}
		var lacking []string
		for _, h := range want {
			if !slices.Contains(g.Live, h) {
				lacking = append(lacking, h)
			}
		}
		if len(lacking) > 0 {
			out = append(out, fmt.Sprintf("gateway %s has no backend answering for %s yet", g.Gateway, strings.Join(lacking, ", ")))
		}
	}
	return out
}
