package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// EnvironmentTeardownArgs asks a worker to remove what runs for an
// environment that was deleted (alone or with its application). The row
// may be gone by the time the job runs, so the args carry everything the
// teardown needs: Preview (previews lose their volumes, environments keep
// them) and Name (for the event) are captured when the deletion is saved.
type EnvironmentTeardownArgs struct {
	TeamID        string `json:"team_id"`
	EnvironmentID string `json:"environment_id"`
	Name          string `json:"name,omitempty"`
	Preview       bool   `json:"preview,omitempty"`
}

// Kind is the River job kind.
func (EnvironmentTeardownArgs) Kind() string { return "environment_teardown" }

// InsertOpts: teardown talks to Docker like a deployment does, so it shares
// the deploy queue and retries an unreachable engine with backoff.
func (EnvironmentTeardownArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueDeploy,
		MaxAttempts: 25,
		UniqueOpts:  river.UniqueOpts{ByArgs: true},
	}
}

// EnvironmentRemover is the part of runtime/swarm teardown needs. The
// pipeline's SwarmDriver leaves it out (deployments never remove a whole
// environment); *swarm.Driver has both.
type EnvironmentRemover interface {
	RemoveEnvironment(ctx context.Context, env swarm.EnvRef) (swarm.Removed, error)
	RemoveVolumes(ctx context.Context, env swarm.EnvRef) ([]string, error)
}

// routeReleaser is the optional part of a RoutesHook that withdraws an
// environment's routes and detaches the gateway (*GatewayRoutes.Release).
type routeReleaser interface {
	Release(ctx context.Context, env store.Environment) error
}

// EnvironmentTeardownWorker is the River worker of EnvironmentTeardownArgs.
type EnvironmentTeardownWorker struct {
	river.WorkerDefaults[EnvironmentTeardownArgs]
	// Pipeline supplies the driver, the routes hook and the store; nil in
	// insert-only processes, which never work jobs.
	Pipeline *Pipeline
}

// teardownTimeout bounds one attempt: removal waits for every task's stop
// grace period, which the manifest may set to minutes.
const teardownTimeout = 15 * time.Minute

// Timeout overrides River's one-minute default; see teardownTimeout.
func (w *EnvironmentTeardownWorker) Timeout(*river.Job[EnvironmentTeardownArgs]) time.Duration {
	return teardownTimeout
}

// Work tears the environment down. Every step is idempotent, so an attempt
// that failed half-way (Docker unreachable, a network still in use) is
// simply run again by River.
func (w *EnvironmentTeardownWorker) Work(ctx context.Context, job *river.Job[EnvironmentTeardownArgs]) error {
	_, err := w.Teardown(ctx, job.Args)
	return err
}

// Teardown withdraws the environment's routes and detaches the gateway,
// removes its services, networks, configs and secrets, for a preview also
// its volumes, and records an environment.teardown event. It returns what
// was removed; environment volumes are listed as retained.
func (w *EnvironmentTeardownWorker) Teardown(ctx context.Context, args EnvironmentTeardownArgs) (swarm.Removed, error) {
	p := w.Pipeline
	if p == nil || p.Store == nil {
		return swarm.Removed{}, errors.New("environment teardown: this process has no pipeline to work jobs with")
	}
	driver, ok := p.Driver.(EnvironmentRemover)
	if !ok {
		// A configuration error no retry can fix.
		return swarm.Removed{}, river.JobCancel(fmt.Errorf("environment teardown: driver %T cannot remove environments", p.Driver))
	}
	// Routes go first so the gateway stops sending traffic to backends that
	// are about to disappear, and Docker can remove the ingress overlay
	// only once the gateway left it.
	if rel, ok := p.Routes.(routeReleaser); ok {
		env := store.Environment{ID: args.EnvironmentID, TeamID: args.TeamID, Name: args.Name}
		if err := rel.Release(ctx, env); err != nil {
			return swarm.Removed{}, fmt.Errorf("environment teardown: release routes: %w", err)
		}
	}
	ref := swarm.EnvRef{ID: args.EnvironmentID, ShortID: store.ShortID(args.EnvironmentID)}
	removed, err := driver.RemoveEnvironment(ctx, ref)
	if err != nil {
		return removed, fmt.Errorf("environment teardown: %w", err)
	}
	var removedVolumes []string
	if args.Preview {
		// RemoveVolumes lists what is left afterwards and fails when any
		// volume survived, so a preview is gone only once its data is.
		if removedVolumes, err = driver.RemoveVolumes(ctx, ref); err != nil {
			return removed, fmt.Errorf("environment teardown: remove preview volumes: %w", err)
		}
		removed.RetainedVolumes = nil
	}
	details := map[string]any{
		"environment":      args.Name,
		"preview":          args.Preview,
		"services":         nonNil(removed.Services),
		"networks":         nonNil(removed.Networks),
		"configs":          nonNil(removed.Configs),
		"secrets":          nonNil(removed.Secrets),
		"retained_volumes": nonNil(removed.RetainedVolumes),
		"removed_volumes":  nonNil(removedVolumes),
	}
	if _, err := p.Store.RecordEvent(ctx, args.TeamID, store.EventParams{
		Actor: "system", Verb: "environment.teardown", ObjectType: "environment", ObjectID: args.EnvironmentID, Details: details,
	}); err != nil {
		return removed, fmt.Errorf("environment teardown: record event: %w", err)
	}
	if err := p.linksChanged(ctx, args.TeamID); err != nil {
		return removed, fmt.Errorf("environment teardown: %w", err)
	}
	if p.Log != nil {
		p.Log.InfoContext(ctx, "environment torn down", "team", args.TeamID, "environment", args.EnvironmentID,
			"services", len(removed.Services), "retained_volumes", removed.RetainedVolumes)
	}
	return removed, nil
}

// nonNil keeps event details lists as [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
