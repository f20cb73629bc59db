package swarm_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/manifest"
	rswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// lineSink collects what a following ServiceLogs hands over while the
// test reads.
type lineSink struct {
	mu      sync.Mutex
	batches [][]rswarm.LogLine
}

func (s *lineSink) emit(b []rswarm.LogLine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, append([]rswarm.LogLine(nil), b...))
	return nil
}

func (s *lineSink) lines() []rswarm.LogLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []rswarm.LogLine
	for _, b := range s.batches {
		out = append(out, b...)
	}
	return out
}

func withText(lines []rswarm.LogLine, text string) []rswarm.LogLine {
	var out []rswarm.LogLine
	for _, l := range lines {
		if strings.Contains(l.Text, text) {
			out = append(out, l)
		}
	}
	return out
}

// TestDriver_ServiceLogs reads a two-replica service's output: each line
// labelled with its replica and node, both replicas merged in time order;
// following hands over new lines until the caller stops; a restart
// replaces every task; names never reach another environment.
func TestDriver_ServiceLogs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 4*time.Minute)
	m := app(manifest.Service{Name: "talker", Replicas: manifest.NewInt(2), Source: manifest.Source{Type: manifest.SourceImage, Image: b.job},
		Command: []string{"/app", "--print", "hello from talker", "--sleep", "600"}})
	st := b.desired(t, m, map[string]string{"talker": b.job})
	if err := b.deploy(ctx, st, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	// The containers may not have written their line yet when the service
	// converged: read until both show (Swarm's log stream lags a little).
	var got []rswarm.LogLine
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		var sink lineSink
		if err := b.driver.ServiceLogs(ctx, b.env, "talker", rswarm.LogOptions{Tail: 100}, sink.emit); err != nil {
			t.Fatal(err)
		}
		if got = withText(sink.lines(), "hello from talker"); len(got) >= 2 {
			if len(sink.batches) != 1 {
				t.Errorf("a tail came in %d calls, want one", len(sink.batches))
			}
			break
		}
	}
	if len(got) < 2 {
		t.Fatalf("logs %+v lack both replicas' output", got)
	}
	tasks := map[string]bool{}
	for i, l := range got {
		tasks[l.Task] = true
		if l.Node == "" || l.TaskID == "" || l.Time.IsZero() || l.Stderr {
			t.Errorf("line %+v lacks its node, task or time", l)
		}
		if l.Text != "hello from talker" {
			t.Errorf("line text %q carries more than the output", l.Text)
		}
		if i > 0 && l.Time.Before(got[i-1].Time) {
			t.Errorf("lines out of time order: %v before %v", got[i-1].Time, l.Time)
		}
	}
	if !tasks["talker.1"] || !tasks["talker.2"] {
		t.Fatalf("lines are labelled %v, want talker.1 and talker.2", tasks)
	}

	t.Run("tail keeps the last lines of the merge", func(t *testing.T) {
		var sink lineSink
		if err := b.driver.ServiceLogs(ctx, b.env, "talker", rswarm.LogOptions{Tail: 1}, sink.emit); err != nil {
			t.Fatal(err)
		}
		if n := len(sink.lines()); n != 1 {
			t.Fatalf("tail 1 gave %d lines", n)
		}
	})

	t.Run("follow returns when the caller stops", func(t *testing.T) {
		fctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var sink lineSink
		done := make(chan error, 1)
		go func() {
			done <- b.driver.ServiceLogs(fctx, b.env, "talker", rswarm.LogOptions{Follow: true}, sink.emit)
		}()
		for deadline := time.Now().Add(30 * time.Second); len(withText(sink.lines(), "hello from talker")) < 2 && time.Now().Before(deadline); {
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
		if n := len(withText(sink.lines(), "hello from talker")); n < 2 {
			t.Fatalf("followed logs have %d lines of output, want both replicas'", n)
		}
	})

	t.Run("since skips what was read", func(t *testing.T) {
		var sink lineSink
		after := got[len(got)-1].Time
		if err := b.driver.ServiceLogs(ctx, b.env, "talker", rswarm.LogOptions{Since: after.Add(time.Nanosecond)}, sink.emit); err != nil {
			t.Fatal(err)
		}
		for _, l := range sink.lines() {
			if !l.Time.After(after) {
				t.Errorf("line at %v read again after %v", l.Time, after)
			}
		}
	})

	t.Run("restart replaces every task", func(t *testing.T) {
		before := runningTasks(t, ctx, b, "talker")
		if err := b.driver.RestartService(ctx, b.env, "talker"); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
			now := runningTasks(t, ctx, b, "talker")
			fresh := 0
			for id := range now {
				if !before[id] {
					fresh++
				}
			}
			if fresh == 2 && len(now) == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the restart %d of %d running tasks are new", fresh, len(now))
			}
		}
		err := b.driver.RestartService(ctx, b.env, "missing")
		if rswarm.Code(err) != rswarm.CodeServiceNotRunning {
			t.Fatalf("restart of an unknown service: %v, want %s", err, rswarm.CodeServiceNotRunning)
		}
	})

	t.Run("another environment's service is not reachable", func(t *testing.T) {
		other := rswarm.EnvRef{ID: "test-env-other-" + swarmtest.ID(), ShortID: b.env.ShortID}
		var sink lineSink
		err := b.driver.ServiceLogs(ctx, other, "talker", rswarm.LogOptions{}, sink.emit)
		if rswarm.Code(err) != rswarm.CodeNameConflict {
			t.Fatalf("same name, other environment id: %v, want %s", err, rswarm.CodeNameConflict)
		}
		if err := b.driver.RestartService(ctx, other, "talker"); rswarm.Code(err) != rswarm.CodeNameConflict {
			t.Fatalf("restart with another environment id: %v, want %s", err, rswarm.CodeNameConflict)
		}
		err = b.driver.ServiceLogs(ctx, b.env, "missing", rswarm.LogOptions{}, sink.emit)
		if rswarm.Code(err) != rswarm.CodeServiceNotRunning {
			t.Fatalf("unknown service: %v, want %s", err, rswarm.CodeServiceNotRunning)
		}
	})
}

// runningTasks are the ids of the service's tasks that run now.
func runningTasks(t *testing.T, ctx context.Context, b *testBundle, service string) map[string]bool {
	t.Helper()
	tasks, err := b.cli.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(
		filters.Arg("service", rswarm.ServiceName(b.env.ShortID, service)), filters.Arg("desired-state", "running"))})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, task := range tasks {
		if task.Status.State == swarm.TaskStateRunning {
			out[task.ID] = true
		}
	}
	return out
}
