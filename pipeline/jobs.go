package pipeline

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// runsJobs: restores and rollbacks never run jobs (running old migrations
// against newer data is what a restore avoids).
func (r *run) runsJobs() bool {
	if r.d.Origin == store.OriginRestore || r.d.Origin == store.OriginRollback {
		return false
	}
	return len(r.desired.Jobs) > 0
}

// jobs runs each before-rollout job once, after its service's dependencies
// converged.
func (r *run) jobs(ctx context.Context) error {
	for _, job := range r.desired.Jobs {
		step := "job:" + job.Job
		if r.progress.Done(step) {
			continue
		}
		svc, ok := r.desired.Service(job.Service)
		if !ok {
			return fail("job_service_missing", "job %s: service %s is not in the deployment", job.Job, job.Service)
		}
		for _, dep := range r.dependencyClosure(svc.DependsOn) {
			if err := r.rolloutService(ctx, dep); err != nil {
				return err
			}
		}
		for _, stop := range job.StopServices {
			if err := r.p.Driver.StopService(ctx, r.envRef(), stop); err != nil {
				return asFailure(err)
			}
		}
		if err := r.start(ctx, step); err != nil {
			return err
		}
		res, err := r.p.Driver.RunJob(ctx, job)
		st := r.progress.Find(step)
		st.Output, st.Truncated = string(res.Output), res.Truncated
		if err != nil {
			if code := swarm.Code(err); code == swarm.CodeJobFailed || code == swarm.CodeJobTimeout {
				_ = r.finish(ctx, step, StepFailed, err.Error())
				return &Failure{Code: code, Message: detail(err)}
			}
			return asFailure(err)
		}
		if err := r.finish(ctx, step, StepSucceeded, fmt.Sprintf("exit code %d", res.ExitCode)); err != nil {
			return err
		}
		r.event(ctx, "job.succeeded", map[string]any{"job": job.Job})
	}
	return nil
}

// dependencyClosure returns names and their transitive dependencies,
// dependencies first.
func (r *run) dependencyClosure(names []string) []string {
	var out []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		if s, ok := r.desired.Service(n); ok {
			for _, d := range s.DependsOn {
				visit(d)
			}
		}
		out = append(out, n)
	}
	for _, n := range names {
		visit(n)
	}
	return out
}
