package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/slipwayhq/slipway/routelive"
)

// rollout updates every service in dependency order and waits for each to
// converge before its dependents, then activates the routes.
func (r *run) rollout(ctx context.Context) error {
	if r.p.Routes != nil {
		if err := r.p.Routes.Withdraw(ctx, r.d, r.env, r.d.RenderedManifest); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(r.desired.Services))
	for _, s := range r.desired.Services {
		names = append(names, s.Service)
	}
	for _, name := range r.dependencyClosure(names) {
		if err := r.rolloutService(ctx, name); err != nil {
			return err
		}
	}
	if r.p.Routes != nil && !r.progress.Done("routes") {
		if err := r.start(ctx, "routes"); err != nil {
			return err
		}
		err := r.p.Routes.Activate(ctx, r.d, r.env, r.d.RenderedManifest)
		var notLive *routelive.NotLiveError
		if errors.As(err, &notLive) {
			return r.routesNotLive(ctx, notLive)
		}
		if err != nil {
			return err
		}
		return r.finish(ctx, "routes", StepSucceeded, "")
	}
	return nil
}

func (r *run) rolloutService(ctx context.Context, name string) error {
	step := "rollout:" + name
	if r.progress.Done(step) {
		return nil
	}
	svc, ok := r.desired.Service(name)
	if !ok {
		return fail("service_missing", "service %s is not in the deployment", name)
	}
	if err := r.start(ctx, step); err != nil {
		return err
	}
	if _, err := r.p.Driver.UpdateService(ctx, svc); err != nil {
		return r.serviceFailed(ctx, step, err)
	}
	if err := r.p.Driver.WaitConverged(ctx, svc, r.p.convergenceTimeout()); err != nil {
		return r.serviceFailed(ctx, step, err)
	}
	return r.finish(ctx, step, StepSucceeded, "converged")
}

func (r *run) serviceFailed(ctx context.Context, step string, err error) error {
	f := asFailure(err)
	if _, ok := f.(*Failure); ok {
		_ = r.finish(ctx, step, StepFailed, err.Error())
	}
	return f
}

// CodeRoutesNotLive is the warning of a deployment whose routes were set
// but not yet served by every gateway when the routes step's bound passed.
const CodeRoutesNotLive = "routes_not_live"

// routesNotLive finishes the routes step with e as a warning on it (shown
// by DeploymentWarnings) and one deployment.warning event: the routes are
// set and will be served once the gateway gets there.
func (r *run) routesNotLive(ctx context.Context, e *routelive.NotLiveError) error {
	r.progress.Finish("routes", StepSucceeded, "not yet served by every gateway", time.Now().UTC())
	step := r.progress.Find("routes")
	if step.Detail == nil {
		step.Detail = map[string]string{}
	}
	step.Detail["warning:spec.routes"] = CodeRoutesNotLive + ": " + e.Error()
	r.event(ctx, "deployment.warning", map[string]any{"warnings": []BoundWarning{{Path: "spec.routes", Code: CodeRoutesNotLive, Message: e.Error()}}})
	r.traceStep(ctx, "routes")
	return r.save(ctx)
}
