package routelive

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// Addresses reads the gateways' reports and the addresses their agents
// reported on each network: *store.Store.
type Addresses interface {
	Reports
	GatewayAddresses(ctx context.Context, network string, since time.Time) ([]store.GatewayAddress, error)
}

// CodeGatewaysNotJoined is the warning of a deployment whose services were
// created before every gateway reported its address on their network.
const CodeGatewaysNotJoined = "gateways_not_joined"

// NotJoinedError is what WaitGatewayAddresses returns when its bound
// passed: the gateways that had not reported an address on the network.
type NotJoinedError struct {
	Network string
	Waited  time.Duration
	Missing []string
}

func (e *NotJoinedError) Error() string {
	return fmt.Sprintf("gateway %s had not joined network %s after %s: the services routed there trust the other gateways until the next drift repair adds its address (%s)",
		strings.Join(e.Missing, ", "), e.Network, e.Waited.Round(time.Second), CodeGatewaysNotJoined)
}

// WaitGatewayAddresses waits until every gateway that reported within
// StaleAfter (the live ones, as WaitRouteLive counts them) has an address
// on network reported within StaleAfter, and returns the addresses there,
// in order. With no live gateway it returns at once: there is none to
// wait for. After wait (DefaultWait when zero or negative) it returns the
// addresses reported so far and a *NotJoinedError naming the gateways
// still missing; when ctx ends first, ctx.Err(). An error reading the
// store is returned at once.
func WaitGatewayAddresses(ctx context.Context, r Addresses, network string, wait time.Duration) ([]string, error) {
	if wait <= 0 {
		wait = DefaultWait
	}
	start := time.Now()
	var ips, missing []string
	expired, err := poll(ctx, wait, func(time.Duration) (bool, error) {
		since := time.Now().Add(-StaleAfter)
		reports, err := r.ListGatewayReports(ctx, since)
		if err != nil {
			return false, fmt.Errorf("wait for the gateways' addresses: %w", err)
		}
		addrs, err := r.GatewayAddresses(ctx, network, since)
		if err != nil {
			return false, fmt.Errorf("wait for the gateways' addresses: %w", err)
		}
		ips, missing = ips[:0], missing[:0]
		joined := map[string]bool{}
		for _, a := range addrs {
			ips = append(ips, a.Address)
			joined[a.Gateway] = true
		}
		for _, g := range reports {
			if !joined[g.Gateway] {
				missing = append(missing, g.Gateway)
			}
		}
		return len(missing) == 0, nil
	})
	switch {
	case err != nil:
		return nil, err
	case expired:
		return ips, &NotJoinedError{Network: network, Waited: time.Since(start), Missing: missing}
	}
	return ips, nil
}
