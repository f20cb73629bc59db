package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/slipwayhq/slipway/runtime/swarm"
)

// cleanup removes what the deployment no longer has: services first, then
// the configs, secrets and networks nothing uses. Volumes stay.
func (r *run) cleanup(ctx context.Context) error {
	if r.progress.Done("cleanup") {
		return nil
	}
	observed, err := r.p.Driver.Observe(ctx, r.envRef())
	if err != nil {
		return err
	}
	actions, err := swarm.Plan(observed, r.desired)
	if err != nil {
		return asFailure(err)
	}
	var removed []string
	for _, a := range actions {
		if a.Op != swarm.OpRemove {
			continue
		}
		remove := func() error { return r.p.Driver.RemoveObject(ctx, a) }
		if a.Kind == swarm.KindService {
			remove = func() error { return r.p.Driver.RemoveService(ctx, r.envRef(), a.Name) }
		}
		if err := remove(); err != nil {
			return asFailure(err)
		}
		removed = append(removed, string(a.Kind)+" "+a.Name)
	}
	if err := r.start(ctx, "cleanup"); err != nil {
		return err
	}
	r.progress.Find("cleanup").Output = strings.Join(removed, "\n")
	return r.finish(ctx, "cleanup", StepSucceeded, fmt.Sprintf("%d removed", len(removed)))
}
