package sampler

import (
	"context"
	"time"

	"github.com/slipwayhq/slipway/runtime/usage"
)

// FollowHealth follows one service's health as if Swarm had reported it
// alone, for tests.
func (s *Sampler) FollowHealth(ctx context.Context, slot time.Time, teamID, environmentID, service string, healthy bool) error {
	return s.followHealth(ctx, slot, []usage.ServiceTasks{{
		Key:     usage.ServiceKey{TeamID: teamID, EnvironmentID: environmentID, Service: service},
		Desired: 1, Running: map[bool]uint64{true: 1, false: 0}[healthy], Healthy: healthy,
	}})
}
