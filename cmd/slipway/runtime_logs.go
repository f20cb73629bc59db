package main

import (
	"context"
	"fmt"
	"io"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

var _ app.ServiceLogReader = swarmStatus{}

// ServiceLogs is the dashboard's read-only view of a service's output.
func (s swarmStatus) ServiceLogs(ctx context.Context, envID, service string, opts app.LogOptions, w io.Writer) error {
	err := s.driver.ServiceLogs(ctx, swarm.EnvRef{ID: envID, ShortID: store.ShortID(envID)}, service,
		swarm.LogOptions{Follow: opts.Follow, Tail: opts.Tail, Timestamps: opts.Timestamps}, w)
	switch {
	case swarm.IsDockerUnavailable(err):
		return fmt.Errorf("%w: %v", api.ErrRuntimeUnavailable, err)
	case swarm.Code(err) == swarm.CodeServiceNotRunning:
		return fmt.Errorf("%w: %v", app.ErrServiceNotRunning, err)
	}
	return err
}
