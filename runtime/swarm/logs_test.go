package swarm_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	rswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// syncBuffer is a buffer a following ServiceLogs writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestDriver_ServiceLogs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 3*time.Minute)
	m := app(manifest.Service{Name: "talker", Source: manifest.Source{Type: manifest.SourceImage, Image: b.job},
		Command: []string{"/app", "--print", "hello from talker", "--sleep", "600"}})
	st := b.desired(t, m, map[string]string{"talker": b.job})
	if err := b.deploy(ctx, st, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	// The container may not have written its line yet when the service
	// converged: read until it shows (Swarm's log stream lags a little).
	var out string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		var buf bytes.Buffer
		if err := b.driver.ServiceLogs(ctx, b.env, "talker", rswarm.LogOptions{Tail: 100}, &buf); err != nil {
			t.Fatal(err)
		}
		if out = buf.String(); strings.Contains(out, "hello from talker") {
			break
		}
	}
	if !strings.Contains(out, "hello from talker") {
		t.Fatalf("logs %q lack the service's output", out)
	}
	// Demultiplexed: no 8-byte stdcopy frame headers left in the text.
	if strings.ContainsRune(out, 0) || strings.ContainsRune(out, 1) {
		t.Fatalf("logs %q still carry stream headers", out)
	}

	t.Run("follow returns when the caller stops", func(t *testing.T) {
		fctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var buf syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- b.driver.ServiceLogs(fctx, b.env, "talker", rswarm.LogOptions{Follow: true, Timestamps: true}, &buf)
		}()
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(buf.String(), "hello from talker") && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		select {
		case err := <-done:
			t.Fatalf("follow ended on its own: %v", err)
		default:
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("follow ended with %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("follow did not end after the context was cancelled")
		}
		if !strings.Contains(buf.String(), "hello from talker") {
			t.Fatalf("followed logs %q lack the line", buf.String())
		}
	})

	t.Run("another environment's service is not reachable", func(t *testing.T) {
		other := rswarm.EnvRef{ID: "test-env-other-" + swarmtest.ID(), ShortID: b.env.ShortID}
		err := b.driver.ServiceLogs(ctx, other, "talker", rswarm.LogOptions{}, &bytes.Buffer{})
		if rswarm.Code(err) != rswarm.CodeNameConflict {
			t.Fatalf("same name, other environment id: %v, want %s", err, rswarm.CodeNameConflict)
		}
		err = b.driver.ServiceLogs(ctx, b.env, "missing", rswarm.LogOptions{}, &bytes.Buffer{})
		if rswarm.Code(err) != rswarm.CodeServiceNotRunning {
			t.Fatalf("unknown service: %v, want %s", err, rswarm.CodeServiceNotRunning)
		}
	})
}
