package api

import (
	"bufio"
	"context"
	"errors"
	"strconv"
	"time"
)

// ServiceLogReader reads what a service of an environment wrote, from
// Docker. It is read-only and addressed by the environment id and the
// manifest's service name, which handlers resolve from the store: a
// caller never names a Docker object. It hands lines to emit merged
// across replicas in time order: the tail in one call, then (Follow) each
// batch of new lines until ctx ends. The dashboard's logs pages and the
// API's logs route read through the same one.
type ServiceLogReader interface {
	ServiceLogs(ctx context.Context, envID, service string, opts LogOptions, emit func([]LogLine) error) error
}

// LogOptions selects what a ServiceLogReader reads.
type LogOptions struct {
	Follow bool
	Tail   int       // the last lines only; 0 reads everything
	Since  time.Time // only lines written after it; zero: no bound
}

// LogLine is one line of a service's output.
type LogLine struct {
	Time   time.Time
	Task   string // the replica, "web.2"
	Node   string // the node's hostname
	Stderr bool
	Text   string
}

// ErrServiceNotRunning is what a ServiceLogReader wraps when Docker has no
// such service for the environment (never deployed, or stopped).
var ErrServiceNotRunning = errors.New("service_not_running")

// LogTail is a tail query parameter within 1..5000, 500 by default.
func LogTail(q string) int {
	n, err := strconv.Atoi(q)
	if err != nil || n <= 0 {
		return 500
	}
	return min(n, 5000)
}

// FollowLogs runs read, which emits batches of lines until ctx ends, and
// writes each batch through format to w, flushing it; every ping it
// writes keepalive, so a reader that left is noticed. It returns when
// read ends (with read's error), ctx ends or a write fails (the reader
// left: nil). The dashboard's event stream and the API's NDJSON stream
// both follow logs through it.
func FollowLogs(ctx context.Context, w *bufio.Writer, read func(ctx context.Context, emit func([]LogLine) error) error, format func([]LogLine) string, keepalive string, ping time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []LogLine, 16)
	done := make(chan error, 1)
	go func() {
		done <- read(ctx, func(b []LogLine) error {
			select {
			case batches <- b:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	ticker := time.NewTicker(ping)
	defer ticker.Stop()
	for {
		var s string
		select {
		case b := <-batches:
			s = format(b)
		case <-ticker.C:
			s = keepalive
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case <-ctx.Done():
			return nil
		}
		if _, err := w.WriteString(s); err != nil {
			return nil
		}
		if err := w.Flush(); err != nil {
			return nil
		}
	}
}
