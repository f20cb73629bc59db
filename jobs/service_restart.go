package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// ServiceRestartArgs asks a worker to restart the tasks of one service of
// an environment: a forced rolling update through the runtime, same spec,
// new containers. The request's own event (service.restart) is recorded
// when it is queued.
type ServiceRestartArgs struct {
	TeamID        string `json:"team_id"`
	EnvironmentID string `json:"environment_id"`
	Service       string `json:"service"`
}

// Kind is the River job kind.
func (ServiceRestartArgs) Kind() string { return "service_restart" }

// InsertOpts: a restart talks to Docker like a deployment does, so it
// shares the deploy queue and retries an unreachable engine.
func (ServiceRestartArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDeploy, MaxAttempts: 10}
}

// ServiceRestarter is the part of runtime/swarm a restart needs;
// *swarm.Driver has it.
type ServiceRestarter interface {
	RestartService(ctx context.Context, env swarm.EnvRef, service string) error
}

// ServiceRestartWorker is the River worker of ServiceRestartArgs.
type ServiceRestartWorker struct {
	river.WorkerDefaults[ServiceRestartArgs]
	// Pipeline supplies the driver and the store; nil in insert-only
	// processes, which never work jobs.
	Pipeline *pipeline.Pipeline
}

// Work restarts the service. A service the environment no longer runs is
// recorded as service.restart_failed and not retried.
func (w *ServiceRestartWorker) Work(ctx context.Context, job *river.Job[ServiceRestartArgs]) error {
	p := w.Pipeline
	if p == nil || p.Store == nil {
		return errors.New("service restart: this process has no pipeline to work jobs with")
	}
	driver, ok := p.Driver.(ServiceRestarter)
	if !ok {
		return river.JobCancel(fmt.Errorf("service restart: driver %T cannot restart services", p.Driver))
	}
	a := job.Args
	err := driver.RestartService(ctx, swarm.EnvRef{ID: a.EnvironmentID, ShortID: store.ShortID(a.EnvironmentID)}, a.Service)
	if swarm.Code(err) == swarm.CodeServiceNotRunning || swarm.Code(err) == swarm.CodeNameConflict {
		if _, rerr := p.Store.RecordEvent(ctx, a.TeamID, store.EventParams{Actor: "worker", Verb: "service.restart_failed", ObjectType: "environment", ObjectID: a.EnvironmentID,
			Details: map[string]any{"service": a.Service, "code": swarm.Code(err)}}); rerr != nil {
			return rerr
		}
		return river.JobCancel(err)
	}
	return err
}
