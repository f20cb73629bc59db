package routelive

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// addresses is reports plus the agents' addresses, changed as the test
// goes.
type addresses struct {
	reports
	mu    sync.Mutex
	addrs map[string][]store.GatewayAddress
	err   error
}

func (a *addresses) set(network string, list ...store.GatewayAddress) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.addrs[network] = list
}

func (a *addresses) GatewayAddresses(_ context.Context, network string, _ time.Time) ([]store.GatewayAddress, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.addrs[network], a.err
}

func TestWaitGatewayAddresses(t *testing.T) {
	t.Parallel()
	const net = "slw-abc-ingress"
	two := []store.GatewayReport{{Gateway: "gw@node2"}, {Gateway: "gw@node3"}}

	t.Run("waits until every live gateway joined", func(t *testing.T) {
		t.Parallel()
		a := &addresses{reports: reports{list: two}, addrs: map[string][]store.GatewayAddress{
			net: {{Gateway: "gw@node2", Address: "10.0.1.5"}},
		}}
		done := make(chan []string, 1)
		go func() {
			ips, err := WaitGatewayAddresses(t.Context(), a, net, 30*time.Second)
			if err != nil {
				t.Error(err)
			}
			done <- ips
		}()
		select {
		case ips := <-done:
			t.Fatalf("returned %v before gw@node3 joined", ips)
		case <-time.After(3 * pollEvery):
		}
		a.set(net, store.GatewayAddress{Gateway: "gw@node3", Address: "10.0.1.3"}, store.GatewayAddress{Gateway: "gw@node2", Address: "10.0.1.5"})
		if ips := <-done; !slices.Equal(ips, []string{"10.0.1.3", "10.0.1.5"}) {
			t.Fatalf("addresses %v", ips)
		}
	})

	t.Run("the bound returns what came and names who is missing", func(t *testing.T) {
		t.Parallel()
		a := &addresses{reports: reports{list: two}, addrs: map[string][]store.GatewayAddress{
			net:           {{Gateway: "gw@node2", Address: "10.0.1.5"}},
			"slw-other-x": {{Gateway: "gw@node3", Address: "10.0.9.3"}},
		}}
		ips, err := WaitGatewayAddresses(t.Context(), a, net, 50*time.Millisecond)
		var nj *NotJoinedError
		if !errors.As(err, &nj) || !slices.Equal(nj.Missing, []string{"gw@node3"}) || !strings.Contains(err.Error(), CodeGatewaysNotJoined) {
			t.Fatalf("err = %v, want a NotJoinedError naming gw@node3", err)
		}
		if !slices.Equal(ips, []string{"10.0.1.5"}) {
			t.Fatalf("addresses %v, want node 2's", ips)
		}
	})

	t.Run("no live gateway is not waited for", func(t *testing.T) {
		t.Parallel()
		// With an hour's bound, returning at all is the proof.
		ips, err := WaitGatewayAddresses(t.Context(), &addresses{addrs: map[string][]store.GatewayAddress{}}, net, time.Hour)
		if err != nil || len(ips) != 0 {
			t.Fatalf("%v %v, want no addresses and no error", ips, err)
		}
	})

	t.Run("the context ends the wait", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		a := &addresses{reports: reports{list: two}, addrs: map[string][]store.GatewayAddress{}}
		if _, err := WaitGatewayAddresses(ctx, a, net, time.Hour); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})

	t.Run("a store error is returned at once", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		a := &addresses{reports: reports{list: two}, addrs: map[string][]store.GatewayAddress{}, err: boom}
		if _, err := WaitGatewayAddresses(t.Context(), a, net, time.Hour); !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
	})
}
