package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// Schedules lists what the rendered manifest runs on a schedule in env:
// its scheduled jobs and its scheduled backups, each with its next run
// after now. Previews run none unless the manifest sets
// spec.previews.schedules. A schedule that does not parse is skipped
// (validation refuses it before a deployment captures it).
func Schedules(m *manifest.Manifest, env store.Environment, now time.Time) []store.ScheduleParams {
	if env.Kind == store.KindPreview && (m.Spec.Previews == nil || !m.Spec.Previews.Schedules) {
		return nil
	}
	var out []store.ScheduleParams
	add := func(p store.ScheduleParams) {
		s, err := manifest.ParseSchedule(p.Spec)
		if err != nil {
			return
		}
		p.NextRunAt = s.Next(now)
		out = append(out, p)
	}
	for _, j := range m.Spec.Jobs {
		if j.Schedule != "" {
			add(store.ScheduleParams{Kind: store.ScheduleJob, Name: j.Name, Spec: j.Schedule, Concurrency: j.Concurrency})
		}
	}
	for _, b := range m.Spec.Backups {
		if b.Schedule != "" {
			add(store.ScheduleParams{Kind: store.ScheduleBackup, Name: b.Name, Spec: b.Schedule,
				Subject: b.Kind() + ":" + b.Subject(), Concurrency: manifest.ConcurrencyForbid})
		}
	}
	return out
}

// deployed follows a successful deployment: the environment's schedules
// become the deployment's, and a failed restore that kept the
// environment stopped no longer holds it.
func (r *run) deployed(ctx context.Context) error {
	if r.rendered == nil {
		if err := r.loadRendered(); err != nil {
			return err
		}
	}
	if err := r.p.Store.SetEnvironmentSchedules(ctx, r.d.TeamID, r.app.ID, r.env.ID, r.d.ID, Schedules(r.rendered, r.env, time.Now())); err != nil {
		return err
	}
	return r.p.Store.ReleaseRestoreHolds(ctx, r.d.TeamID, r.env.ID)
}

// held reports whether a restore keeps the environment as it is (its
// services stopped): drift repair leaves it alone.
func (p *Pipeline) held(ctx context.Context, teamID, envID string) (bool, error) {
	_, err := p.Store.EnvironmentHold(ctx, teamID, envID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Current is what an environment's succeeded deployment runs, computed
// again as drift repair does: the scheduled-job runs, backups and restores
// build their containers from it.
type Current struct {
	Deployment store.Deployment
	Env        store.Environment
	App        store.Application
	Rendered   *manifest.Manifest
	Desired    swarm.DesiredState
}

// EnvRef is the environment's reference for the Swarm driver.
func (c Current) EnvRef() swarm.EnvRef {
	return swarm.EnvRef{ID: c.Env.ID, ShortID: store.ShortID(c.Env.ID)}
}

// CurrentOf returns what the environment's latest succeeded deployment
// runs, with its configs and secrets ensured on Swarm. An environment that
// never deployed successfully is store.ErrNotFound.
func (p *Pipeline) CurrentOf(ctx context.Context, teamID, envID string) (Current, error) {
	d, err := p.Store.LatestSucceededDeployment(ctx, teamID, envID)
	if err != nil {
		return Current{}, err
	}
	r, err := p.newRun(ctx, d)
	if err != nil {
		return Current{}, err
	}
	if err := r.loadRendered(); err != nil {
		return Current{}, err
	}
	if r.desired, err = r.buildDesired(ctx); err != nil {
		return Current{}, err
	}
	for _, ensure := range []func(context.Context, swarm.DesiredState) error{p.Driver.EnsureConfigs, p.Driver.EnsureSecrets} {
		if err := ensure(ctx, r.desired); err != nil {
			return Current{}, err
		}
	}
	return Current{Deployment: d, Env: r.env, App: r.app, Rendered: r.rendered, Desired: r.desired}, nil
}
