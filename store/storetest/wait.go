package storetest

import (
	"context"
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing the test after a minute: for
// states reached asynchronously, such as a Postgres notification acted on.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// RunListening runs run (a cache's Run) until the test ends, and returns
// once listening reports true.
func RunListening(t testing.TB, run func(context.Context), listening func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	WaitFor(t, "the cache to listen", listening)
}
