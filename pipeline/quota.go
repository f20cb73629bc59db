package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/store"
)

// quotaWait is how long a deployment waits for its team's turn.
const quotaWait = 2 * time.Second

// checkQuota refuses, before anything changes, a deployment whose
// rendered manifest would take the team past its replicas, CPU or memory
// quota (quota_exceeded, naming the quota, its limit and the use). It is
// the check every deployment passes, whatever asked for it: the API, the
// CLI, the dashboard, a sync or a GitHub preview.
func (r *run) checkQuota(ctx context.Context, rendered json.RawMessage) error {
	m, err := manifest.Decode(rendered, "json")
	if err != nil {
		return err
	}
	err = quota.CheckResources(ctx, r.p.Store, r.d.TeamID, []string{r.env.ID}, quota.NeedsOf(m), "spec.services")
	var qe *quota.Error
	if errors.As(err, &qe) {
		return fail(quota.Code, "%s: %s", qe.Field, qe.Error())
	}
	return err
}

// acquireSlot takes the deployment's lease if its team has a deployment
// slot free (quota concurrent_deployments), and waits its turn otherwise:
// the job yields its worker, so another team's deployment runs meanwhile.
func (p *Pipeline) acquireSlot(ctx context.Context, teamID, id string) error {
	limits, err := quota.Get(ctx, p.Store, teamID)
	if err != nil {
		return err
	}
	err = p.Store.AcquireDeploymentSlot(ctx, teamID, id, p.owner(), p.leaseTTL(), limits[quota.ConcurrentDeployments])
	switch {
	case errors.Is(err, store.ErrLeaseHeld):
		return &WaitError{After: p.leaseTTL() / 2, Reason: "another worker holds the deployment"}
	case errors.Is(err, store.ErrTeamBusy):
		return &WaitError{After: quotaWait, Reason: "the team runs as many deployments as its concurrent_deployments quota allows"}
	}
	return err
}

// claimBuild holds one of the team's build slots (quota
// concurrent_builds) for this deployment's builds; release gives it back.
// A team using them all waits its turn.
func (r *run) claimBuild(ctx context.Context) (release func(), err error) {
	limits, err := quota.Get(ctx, r.p.Store, r.d.TeamID)
	if err != nil {
		return nil, err
	}
	err = r.p.Store.ClaimBuildSlot(ctx, r.d.TeamID, r.d.ID, limits[quota.ConcurrentBuilds])
	if errors.Is(err, store.ErrTeamBusy) {
		return nil, &WaitError{After: quotaWait, Reason: "the team runs as many builds as its concurrent_builds quota allows"}
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = r.p.Store.ReleaseBuildSlot(context.WithoutCancel(ctx), r.d.TeamID, r.d.ID) }, nil
}
