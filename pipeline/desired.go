package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/routelive"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// plan computes what should run, checks it against what runs, and creates
// the networks, volumes, configs and secrets the services need.
func (r *run) plan(ctx context.Context) error {
	r.planning = true
	desired, err := r.buildDesired(ctx)
	if err != nil {
		return err
	}
	r.desired = desired
	// A pinned volume's node must be able to run its services: never
	// start them elsewhere on an empty volume.
	if err := r.p.Driver.CheckVolumeNodes(ctx, desired); err != nil {
		return asFailure(err)
	}
	observed, err := r.p.Driver.Observe(ctx, r.envRef())
	if err != nil {
		return err
	}
	actions, err := swarm.Plan(observed, desired)
	if err != nil {
		return fail(codeOf(err, "plan_failed"), "%s", detail(err))
	}
	if !r.progress.Done("plan") {
		if err := r.start(ctx, "plan"); err != nil {
			return err
		}
		summary := make([]string, 0, len(actions))
		for _, a := range actions {
			summary = append(summary, a.String())
		}
		r.progress.Find("plan").Output = strings.Join(summary, "\n")
		r.noteNotJoined(ctx)
		if err := r.finish(ctx, "plan", StepSucceeded, fmt.Sprintf("%d changes", len(actions))); err != nil {
			return err
		}
	}
	return r.ensureObjects(ctx)
}

// ensureObjects creates the networks, volumes, configs and secrets the
// desired services need.
func (r *run) ensureObjects(ctx context.Context) error {
	// A preview's volumes are inventoried before they exist, so deleting
	// it checks every one is gone (preview_delete.go).
	if err := r.inventoryPreviewVolumes(ctx); err != nil {
		return err
	}
	for _, ensure := range []func(context.Context, swarm.DesiredState) error{
		r.p.Driver.EnsureNetworks, r.p.Driver.EnsureVolumes, r.p.Driver.EnsureConfigs, r.p.Driver.EnsureSecrets,
	} {
		if err := ensure(ctx, r.desired); err != nil {
			return asFailure(err)
		}
	}
	return nil
}

// buildDesired turns the captured, rendered manifest and the prepared
// images and pinned secrets into the Swarm objects that should run.
func (r *run) buildDesired(ctx context.Context) (swarm.DesiredState, error) {
	secrets, err := r.secretValues(ctx)
	if err != nil {
		return swarm.DesiredState{}, err
	}
	// `path` files come from the deployment's repository record (fetch.go).
	files, err := r.repositoryFiles(ctx)
	if err != nil {
		return swarm.DesiredState{}, err
	}
	in := swarm.DesiredInput{
		Manifest:     r.rendered,
		TeamID:       r.d.TeamID,
		AppID:        r.app.ID,
		EnvID:        r.env.ID,
		EnvShortID:   store.ShortID(r.env.ID),
		DeploymentID: r.d.ID,
		Images:       r.images(),
		Secrets:      secrets,
		Routed:       routedServices(r.rendered),

		RepositoryFiles: files,

		PidsLimit:          r.p.Containers.PidsLimit,
		DefaultMemoryBytes: r.p.Containers.DefaultMemoryBytes,
		LimitOnly:          r.limitOnly(),
	}
	if in.VolumeNodes, err = r.volumeNodes(ctx); err != nil {
		return swarm.DesiredState{}, err
	}
	if in.Links, err = r.envLinks(ctx); err != nil {
		return swarm.DesiredState{}, err
	}
	if in.JobLinks, err = r.jobLinks(ctx, in.Links); err != nil {
		return swarm.DesiredState{}, err
	}
	if err := r.telemetryMount(ctx, &in); err != nil {
		return swarm.DesiredState{}, err
	}
	if r.p.Routes != nil && len(in.Routed) > 0 {
		// The gateway can only join the ingress overlay once it exists:
		// create the networks first, then render the proxies' addresses.
		first, err := swarm.Desired(in)
		if err != nil {
			return swarm.DesiredState{}, fail(codeOf(err, "plan_failed"), "%s", detail(err))
		}
		if err := r.p.Driver.EnsureNetworks(ctx, first); err != nil {
			return swarm.DesiredState{}, asFailure(err)
		}
		network := swarm.IngressNetworkName(in.EnvShortID)
		if in.IngressProxies, err = r.connectGateways(ctx, network); err != nil {
			return swarm.DesiredState{}, err
		}
	}
	desired, err := swarm.Desired(in)
	if err != nil {
		return swarm.DesiredState{}, fail(codeOf(err, "plan_failed"), "%s", detail(err))
	}
	return desired, r.attachRegistryAuth(ctx, &desired)
}

// connectGateways returns what the services routed on network trust as
// proxies: a deployment (plan) makes the gateways join it first, so its
// services start with every gateway's address; a drift repair or a job
// run reads the addresses the gateways have there.
func (r *run) connectGateways(ctx context.Context, network string) (string, error) {
	if !r.planning {
		return r.p.Routes.Connect(ctx, r.env, network)
	}
	proxies, err := r.p.Routes.Join(ctx, r.env, network)
	if errors.As(err, &r.notJoined) {
		return proxies, nil
	}
	return proxies, err
}

// noteNotJoined leaves the gateways that had not joined the environment's
// network in time as a warning on the plan step (shown by
// DeploymentWarnings) and one deployment.warning event: the services
// trust the others until the next drift repair adds their addresses.
func (r *run) noteNotJoined(ctx context.Context) {
	if r.notJoined == nil {
		return
	}
	step := r.progress.Find("plan")
	if step.Detail == nil {
		step.Detail = map[string]string{}
	}
	step.Detail["warning:spec.routes"] = routelive.CodeGatewaysNotJoined + ": " + r.notJoined.Error()
	r.event(ctx, "deployment.warning", map[string]any{"warnings": []BoundWarning{{Path: "spec.routes", Code: routelive.CodeGatewaysNotJoined, Message: r.notJoined.Error()}}})
}

// secretValues returns the pinned secrets' values.
func (r *run) secretValues(ctx context.Context) (map[string]swarm.SecretValue, error) {
	if r.p.Secrets == nil {
		return nil, r.checkSecrets()
	}
	pinned := map[string]string{}
	if c := r.progress.Find("capture"); c != nil {
		for k, v := range c.Detail {
			if name, ok := strings.CutPrefix(k, "secret:"); ok {
				pinned[name] = v
			}
		}
	}
	values, err := r.p.Secrets.Values(ctx, r.d.TeamID, r.env, pinned)
	return values, asCoded(err)
}

// checkSecrets refuses manifests that mount secrets when no secret source
// is configured: nothing may start with a missing file.
func (r *run) checkSecrets() error {
	var missing []string
	seen := map[string]bool{}
	add := func(mounts []manifest.SecretMount) {
		for _, s := range mounts {
			if !seen[s.Name] {
				seen[s.Name] = true
				missing = append(missing, s.Name)
			}
		}
	}
	for _, s := range r.rendered.Spec.Services {
		add(s.Secrets)
	}
	for _, j := range r.rendered.Spec.Jobs {
		add(j.Secrets)
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fail(CodeSecretMissing, "no value for secret(s) %s: set them with `slipway app secret set`", strings.Join(missing, ", "))
}

func routedServices(m *manifest.Manifest) []string {
	seen := map[string]bool{}
	var out []string
	for _, rt := range m.Spec.Routes {
		if rt.Service != "" && !seen[rt.Service] {
			seen[rt.Service] = true
			out = append(out, rt.Service)
		}
	}
	return out
}
