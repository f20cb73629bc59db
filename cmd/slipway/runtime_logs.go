package main

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

var _ app.ServiceLogReader = swarmStatus{}

// ServiceLogs is the dashboard's read-only view of a service's output.
func (s swarmStatus) ServiceLogs(ctx context.Context, envID, service string, opts app.LogOptions, emit func([]app.LogLine) error) error {
	err := s.driver.ServiceLogs(ctx, swarm.EnvRef{ID: envID, ShortID: store.ShortID(envID)}, service,
		swarm.LogOptions{Follow: opts.Follow, Tail: opts.Tail, Since: opts.Since}, func(lines []swarm.LogLine) error {
			return emit(logLines(lines))
		})
	switch {
	case swarm.IsDockerUnavailable(err):
		return fmt.Errorf("%w: %v", api.ErrRuntimeUnavailable, err)
	case swarm.Code(err) == swarm.CodeServiceNotRunning:
		return fmt.Errorf("%w: %v", app.ErrServiceNotRunning, err)
	}
	return err
}

// logLines converts the driver's lines to the dashboard's.
func logLines(lines []swarm.LogLine) []app.LogLine {
	out := make([]app.LogLine, len(lines))
	for i, l := range lines {
		out[i] = app.LogLine{Time: l.Time, Task: l.Task, Node: l.Node, Stderr: l.Stderr, Text: l.Text}
	}
	return out
}
