package pipeline

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

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

// Teardown names an environment to tear down. The environment's row may be
// gone by then, so it carries what the teardown needs: Preview (previews
// lose their volumes, environments keep them) and Name (for the event).
type Teardown struct {
	TeamID        string
	EnvironmentID string
	Name          string
	Preview       bool
}

// TeardownEnvironment withdraws the environment's routes and detaches the gateway,
// removes its services, networks, configs and secrets, for a preview also
// its volumes, and records an environment.teardown event. It returns what
// was removed; environment volumes are listed as retained.
func (p *Pipeline) TeardownEnvironment(ctx context.Context, args Teardown) (swarm.Removed, error) {
	driver, ok := p.Driver.(EnvironmentRemover)
	if !ok {
		// A configuration error no retry can fix.
		return swarm.Removed{}, &PermanentError{Err: fmt.Errorf("environment teardown: driver %T cannot remove environments", p.Driver)}
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
	{
		p.logger().InfoContext(ctx, "environment torn down", "team", args.TeamID, "environment", args.EnvironmentID,
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
