package routelive

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// reports is a Reports whose answers the test changes as it goes.
type reports struct {
	mu    sync.Mutex
	list  []store.GatewayReport
	err   error
	since time.Time
}

func (r *reports) set(list ...store.GatewayReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = list
}

func (r *reports) ListGatewayReports(_ context.Context, since time.Time) ([]store.GatewayReport, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.since = since
	return r.list, r.err
}

func TestWaitRouteLive(t *testing.T) {
	t.Parallel()
	hosts := []string{"App.Example.com", "*.previews.example.com"}
	live := []string{"*.previews.example.com", "app.example.com", "other.example.com"}
	tests := []struct {
		name    string
		reports []store.GatewayReport
		missing string // "" when live
	}{
		{"one gateway serving both", []store.GatewayReport{{Gateway: "gw", TableVersion: 7, Live: live}}, ""},
		{"a later version", []store.GatewayReport{{Gateway: "gw", TableVersion: 9, Live: live}}, ""},
		{"no gateway", nil, "no gateway has reported"},
		{"an older version", []store.GatewayReport{{Gateway: "gw", TableVersion: 6, Live: live}}, "gateway gw serves route table version 6"},
		{"a backend not answering", []store.GatewayReport{{Gateway: "gw", TableVersion: 7, Live: []string{"app.example.com"}}},
			"gateway gw has no backend answering for *.previews.example.com yet"},
		{"one of two gateways behind", []store.GatewayReport{{Gateway: "a", TableVersion: 7, Live: live}, {Gateway: "b", TableVersion: 5}},
			"gateway b serves route table version 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &reports{list: tt.reports}
			err := WaitRouteLive(t.Context(), r, 7, hosts, 50*time.Millisecond)
			var notLive *NotLiveError
			switch {
			case tt.missing == "" && err != nil:
				t.Fatalf("err = %v, want live", err)
			case tt.missing != "" && (!errors.As(err, &notLive) || !strings.Contains(err.Error(), tt.missing)):
				t.Fatalf("err = %v, want a NotLiveError saying %q", err, tt.missing)
			}
			if d := time.Since(r.since); d < StaleAfter-time.Minute || d > StaleAfter+time.Minute {
				t.Fatalf("reports read since %s ago, want %s", d, StaleAfter)
			}
		})
	}

	t.Run("waits until the gateway gets there", func(t *testing.T) {
		t.Parallel()
		r := &reports{list: []store.GatewayReport{{Gateway: "gw", TableVersion: 6}}}
		done := make(chan error, 1)
		go func() { done <- WaitRouteLive(t.Context(), r, 7, hosts, 30*time.Second) }()
		select {
		case err := <-done:
			t.Fatalf("returned %v before the gateway served version 7", err)
		case <-time.After(3 * pollEvery):
		}
		r.set(store.GatewayReport{Gateway: "gw", TableVersion: 7, Live: live})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("no gateway is waited for briefly", func(t *testing.T) {
		t.Parallel()
		// With an hour's bound, returning at all is the proof.
		var notLive *NotLiveError
		if err := WaitRouteLive(t.Context(), &reports{}, 7, hosts, time.Hour); !errors.As(err, &notLive) || notLive.Waited < NoGatewayWait {
			t.Fatalf("err = %v, want a NotLiveError after %s", err, NoGatewayWait)
		}
	})

	t.Run("the context ends the wait", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		behind := &reports{list: []store.GatewayReport{{Gateway: "gw", TableVersion: 6}}}
		go func() { done <- WaitRouteLive(ctx, behind, 7, hosts, time.Minute) }()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})

	t.Run("a store error is returned at once", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		if err := WaitRouteLive(t.Context(), &reports{err: boom}, 7, hosts, time.Minute); !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
	})
}
