package api

import (
	"context"
	"errors"
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
