package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/api"
)

// TestProgress_TerminalAndPlain: a terminal gets one redrawn line for the
// running step; elsewhere every transition is a plain line with no escapes.
func TestProgress_TerminalAndPlain(t *testing.T) {
	t.Parallel()
	start := time.Now().Add(-5 * time.Second)
	end := start.Add(1500 * time.Millisecond)
	running := api.Deployment{ID: "dep_1", Environment: "production", Steps: []api.Step{
		{Name: "capture", State: "succeeded", StartedAt: start, FinishedAt: &end},
		{Name: "rollout:web", State: "running", StartedAt: start},
	}}
	done := running
	done.Steps = []api.Step{running.Steps[0], {Name: "rollout:web", State: "failed", Message: "task exited", StartedAt: start, FinishedAt: &end}}
	done.State, done.Terminal = "failed", true

	var plain bytes.Buffer
	p := newProgress(&plain, false)
	p.update(running)
	p.update(running) // a second poll of the same state prints nothing
	p.update(done)
	p.finish(done)
	p.settle()
	want := "succeeded capture in 1.5s\nstarted   rollout:web\nfailed    rollout:web in 1.5s: task exited\ndeployment dep_1 failed\n"
	if plain.String() != want {
		t.Fatalf("plain output:\n%q\nwant\n%q", plain.String(), want)
	}

	var tty bytes.Buffer
	p = newProgress(&tty, true)
	p.tty = true
	p.update(running)
	p.update(running)
	p.update(done)
	out := tty.String()
	if strings.Count(out, "\r\033[K… production: rollout:web (") != 2 || !strings.Contains(out, "\r\033[Kfailed    production: rollout:web in 1.5s: task exited\n") {
		t.Fatalf("terminal output: %q", out)
	}
}

func TestFailureReason_NamesCodeMessageAndStep(t *testing.T) {
	t.Parallel()
	d := api.Deployment{ID: "dep_2", Environment: "staging", State: "failed", ErrorCode: "job_failed", ErrorMessage: "migrate exited 3",
		Steps: []api.Step{{Name: "capture", State: "succeeded"}, {Name: "job:migrate", State: "failed", Message: "exit code 3"}}}
	got := failureReason(d)
	want := "deployment dep_2 of staging failed: job_failed: migrate exited 3 (failed step job:migrate: exit code 3)"
	if got != want {
		t.Fatalf("failureReason = %q, want %q", got, want)
	}
}
