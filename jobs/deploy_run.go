package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// Deployment error codes the pipeline records, beside the runtime's own
// (rollout_failed, convergence_timeout, job_failed, job_timeout,
// name_conflict) and the manifest's validation codes.
const (
	CodeManifestInvalid     = "manifest_validation_failed"
	CodeVariableMissing     = "variable_value_missing"
	CodeSecretMissing       = "secret_missing"
	CodeRollbackUnavailable = "rollback_unavailable"
)

// run is one deployment being advanced.
type run struct {
	p        *Pipeline
	d        store.Deployment
	env      store.Environment
	app      store.Application
	progress Progress
	rendered *manifest.Manifest
	desired  swarm.DesiredState
	// fetched is what a repository-backed deployment read (deploy_fetch.go).
	fetched *store.DeploymentFetch
}

func (p *Pipeline) newRun(ctx context.Context, d store.Deployment) (*run, error) {
	env, err := p.Store.GetEnvironment(ctx, d.TeamID, d.EnvironmentID)
	if err != nil {
		return nil, err
	}
	app, err := p.Store.GetApplication(ctx, d.TeamID, d.ApplicationID)
	if err != nil {
		return nil, err
	}
	progress, err := ParseProgress(d.Steps)
	if err != nil {
		return nil, fmt.Errorf("read progress of %s: %w", d.ID, err)
	}
	return &run{p: p, d: d, env: env, app: app, progress: progress}, nil
}

func (r *run) envRef() swarm.EnvRef {
	return swarm.EnvRef{ID: r.env.ID, ShortID: store.ShortID(r.env.ID)}
}

// stageOrder ranks the live states: a resumed deployment skips the
// transitions it already made.
var stageOrder = map[store.DeploymentState]int{
	store.StateRequested:   0,
	store.StateCapturing:   1,
	store.StatePreparing:   2,
	store.StateRunningJobs: 3,
	store.StateRollingOut:  4,
	store.StateSucceeded:   5,
}

// transition moves the deployment on, tolerating a retry or a resumed
// deployment that is there already, or past it.
func (r *run) transition(ctx context.Context, to store.DeploymentState, from ...store.DeploymentState) error {
	if cur, ok := stageOrder[r.d.State]; ok && cur >= stageOrder[to] {
		return nil
	}
	d, err := r.p.transitionTx(ctx, func(tx *store.Store) (store.Deployment, error) {
		return tx.TransitionDeployment(ctx, r.d.TeamID, r.d.ID, from, to)
	})
	if err != nil {
		return err
	}
	r.d = d
	r.event(ctx, "deployment."+string(to), nil)
	return nil
}

// save persists the progress record.
func (r *run) save(ctx context.Context) error {
	return r.p.Store.SetDeploymentSteps(ctx, r.d.TeamID, r.d.ID, r.progress.JSON())
}

func (r *run) start(ctx context.Context, step string) error {
	r.progress.Start(step, time.Now().UTC())
	return r.save(ctx)
}

func (r *run) finish(ctx context.Context, step, state, message string) error {
	r.progress.Finish(step, state, message, time.Now().UTC())
	r.traceStep(ctx, step)
	return r.save(ctx)
}

func (r *run) event(ctx context.Context, verb string, details map[string]any) {
	if details == nil {
		details = map[string]any{}
	}
	details["environment_id"] = r.env.ID
	details["application_id"] = r.app.ID
	_, err := r.p.Store.RecordEvent(context.WithoutCancel(ctx), r.d.TeamID, store.EventParams{
		Actor: "worker", Verb: verb, ObjectType: "deployment", ObjectID: r.d.ID, Details: details,
	})
	if err != nil {
		r.p.Log.WarnContext(ctx, "record event", "verb", verb, "error", err)
	}
}

// advance runs every remaining step.
func (r *run) advance(ctx context.Context) error {
	if err := r.transition(ctx, store.StateCapturing, store.StateRequested); err != nil {
		return err
	}
	if err := r.capture(ctx); err != nil {
		return err
	}
	if err := r.transition(ctx, store.StatePreparing, store.StateCapturing); err != nil {
		return err
	}
	if err := r.prepare(ctx); err != nil {
		return err
	}
	// A prepared repository-backed deployment saves what it read when it
	// changed (deploy_fetch.go).
	if err := r.adoptFetchedManifest(ctx); err != nil {
		return err
	}
	if err := r.plan(ctx); err != nil {
		return err
	}
	if r.runsJobs() {
		if err := r.transition(ctx, store.StateRunningJobs, store.StatePreparing); err != nil {
			return err
		}
		if err := r.jobs(ctx); err != nil {
			return err
		}
	}
	if err := r.transition(ctx, store.StateRollingOut, store.StatePreparing, store.StateRunningJobs); err != nil {
		return err
	}
	if err := r.rollout(ctx); err != nil {
		return err
	}
	if err := r.cleanup(ctx); err != nil {
		return err
	}
	if err := r.transition(ctx, store.StateSucceeded, store.StateRollingOut); err != nil {
		return err
	}
	r.observe("succeeded")
	if err := r.p.linksChanged(context.WithoutCancel(ctx), r.d.TeamID); err != nil {
		r.p.Log.WarnContext(ctx, "enqueue links reconcile", "deployment", r.d.ID, "error", err)
	}
	return nil
}

// observe counts the deployment's outcome and duration.
func (r *run) observe(outcome string) {
	start := r.d.CreatedAt
	if r.d.StartedAt != nil {
		start = *r.d.StartedAt
	}
	r.p.Metrics.ObserveDeployment(outcome, time.Since(start))
}

// capture pins what the deployment runs: the saved revision rendered for
// the environment (builds), the deployment restored exactly (restores and
// rollbacks), or a release rendered for this environment (promotions).
func (r *run) capture(ctx context.Context) error {
	if r.d.RenderedManifest != nil {
		return r.loadRendered()
	}
	if err := r.start(ctx, "capture"); err != nil {
		return err
	}
	var capture store.Capture
	var err error
	switch r.d.Origin {
	case store.OriginRestore, store.OriginRollback:
		capture, err = r.captureRestore(ctx)
	case store.OriginPromotion, store.OriginRelease:
		capture, err = r.capturePromotion(ctx)
	default:
		capture, err = r.captureRevision(ctx)
	}
	if err != nil {
		return err
	}
	d, err := r.p.Store.RecordCapture(ctx, r.d.TeamID, r.d.ID, capture)
	if errors.Is(err, store.ErrAlreadyCaptured) {
		d, err = r.p.Store.GetDeployment(ctx, r.d.TeamID, r.d.ID)
	}
	if err != nil {
		return err
	}
	r.d.CapturedManifest, r.d.RenderedManifest, r.d.Variables = d.CapturedManifest, d.RenderedManifest, d.Variables
	if err := r.finish(ctx, "capture", StepSucceeded, ""); err != nil {
		return err
	}
	return r.loadRendered()
}

// captureRestore pins the restored deployment: its rendered manifest, the
// images it ran and the secret versions it pinned.
func (r *run) captureRestore(ctx context.Context) (store.Capture, error) {
	src, err := r.p.Store.GetDeployment(ctx, r.d.TeamID, r.d.RestoredFrom)
	if err != nil {
		return store.Capture{}, fail("restore_source_missing", "the deployment to restore is gone: %v", err)
	}
	srcProgress, _ := ParseProgress(src.Steps)
	if err := r.adoptPrepared(ctx, srcProgress); err != nil {
		return store.Capture{}, err
	}
	if c := srcProgress.Find("capture"); c != nil {
		r.progress.Find("capture").Detail = c.Detail
		if err := r.save(ctx); err != nil {
			return store.Capture{}, err
		}
	}
	return store.Capture{Manifest: src.CapturedManifest, Rendered: src.RenderedManifest, Variables: src.Variables}, nil
}

// adoptPrepared reuses a deployment's prepared images, so nothing is pulled
// or built again.
func (r *run) adoptPrepared(ctx context.Context, src Progress) error {
	prep := src.Find("prepare")
	if prep == nil || prep.State != StepSucceeded {
		return fail("release_unavailable", "the source deployment never prepared its images")
	}
	if r.progress.Find("prepare") == nil {
		r.progress.Steps = append(r.progress.Steps, *prep)
	}
	return r.save(ctx)
}

// captureRevision renders the saved revision for the environment and pins
// the secret versions it mounts.
func (r *run) captureRevision(ctx context.Context) (store.Capture, error) {
	rev, err := r.p.Store.GetManifestRevision(ctx, r.d.TeamID, r.d.ApplicationID, r.d.Revision)
	if err != nil {
		return store.Capture{}, fail("revision_missing", "manifest revision %d: %v", r.d.Revision, err)
	}
	// Repository-backed applications deploy the file their repository holds
	// (deploy_fetch.go).
	if capture, ok, err := r.captureFromRepository(ctx, rev.Manifest); ok {
		return capture, err
	}
	return r.renderAndPin(ctx, rev.Manifest)
}

// capturePromotion renders a release's own manifest for this environment.
// The release's images are deployed as recorded, never rebuilt, so every
// build input must render as it did where it was built.
func (r *run) capturePromotion(ctx context.Context) (store.Capture, error) {
	src, err := r.p.Store.GetDeployment(ctx, r.d.TeamID, r.d.PromotedFrom)
	if err != nil {
		return store.Capture{}, fail("release_unavailable", "the promoted deployment is gone: %v", err)
	}
	capture, err := r.renderAndPin(ctx, src.CapturedManifest)
	if err != nil {
		return store.Capture{}, err
	}
	before, err := manifest.Decode(src.RenderedManifest, "json")
	if err != nil {
		return store.Capture{}, fail("release_unavailable", "the release's manifest does not decode: %v", err)
	}
	after, err := manifest.Decode(capture.Rendered, "json")
	if err != nil {
		return store.Capture{}, err
	}
	if diffs := BuildInputChanges(before, after); len(diffs) > 0 {
		return store.Capture{}, fail("release_incompatible",
			"the release's build inputs render differently in %s: %s; keep per-environment values out of build inputs",
			r.env.Name, strings.Join(diffs, "; "))
	}
	srcProgress, _ := ParseProgress(src.Steps)
	if err := r.adoptPrepared(ctx, srcProgress); err != nil {
		return store.Capture{}, err
	}
	return capture, nil
}

// BuildInputChanges lists the build inputs (image, dockerfile, context,
// build arguments, target) that differ between two renderings of a
// release, as "services.<name>.<field>: before -> after".
func BuildInputChanges(before, after *manifest.Manifest) []string {
	var out []string
	idx := map[string]manifest.Service{}
	for _, s := range before.Spec.Services {
		idx[s.Name] = s
	}
	for _, a := range after.Spec.Services {
		b, ok := idx[a.Name]
		if !ok {
			continue
		}
		add := func(field, x, y string) {
			if x != y {
				out = append(out, fmt.Sprintf("services.%s.%s: %q -> %q", a.Name, field, x, y))
			}
		}
		add("source.image", b.Source.Image, a.Source.Image)
		bb, ab := b.Source.Build, a.Source.Build
		if bb == nil || ab == nil {
			continue
		}
		add("build.dockerfile", bb.Dockerfile, ab.Dockerfile)
		add("build.context", bb.Context, ab.Context)
		add("build.target", bb.Target, ab.Target)
		keys := map[string]bool{}
		for k := range bb.Args {
			keys[k] = true
		}
		for k := range ab.Args {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			add("build.args."+k, bb.Args[k], ab.Args[k])
		}
	}
	return out
}

// renderAndPin renders a saved manifest for the environment and pins the
// secret versions it mounts.
func (r *run) renderAndPin(ctx context.Context, saved json.RawMessage) (store.Capture, error) {
	m, err := manifest.Decode(saved, "json")
	if err != nil {
		return store.Capture{}, fail(CodeManifestInvalid, "the manifest does not decode: %v", err)
	}
	rc := r.renderContext()
	rendered, errs := manifest.Render(m, rc)
	if len(errs) > 0 {
		return store.Capture{}, fail(firstCode(errs), "%s", errs.Error())
	}
	// Previews run within the daemon's bounds (preview_bounds.go).
	warnings := r.boundPreview(rendered)
	warnings = append(warnings, r.importWarnings(ctx, rendered)...) // links_reconcile.go
	if r.p.Secrets != nil {
		pinned, err := r.p.Secrets.Capture(ctx, r.d.TeamID, r.env, rendered)
		if err != nil {
			return store.Capture{}, asCoded(err)
		}
		detail := map[string]string{}
		for name, version := range pinned {
			detail["secret:"+name] = version
		}
		r.progress.Find("capture").Detail = detail
		// Saved before the capture is recorded: a resumed deployment that
		// finds its capture finds its pinned versions too.
		if err := r.save(ctx); err != nil {
			return store.Capture{}, err
		}
	}
	if err := r.recordBoundWarnings(ctx, warnings); err != nil {
		return store.Capture{}, err
	}
	vars, _ := json.Marshal(scopeJSON(manifest.Scope(m, rc)))
	renderedJSON, err := json.Marshal(rendered)
	if err != nil {
		return store.Capture{}, err
	}
	return store.Capture{Manifest: saved, Rendered: renderedJSON, Variables: vars}, nil
}

func (r *run) renderContext() manifest.RenderContext {
	rc := manifest.RenderContext{
		Environment:  r.env.Name,
		Preview:      r.env.Kind == store.KindPreview,
		Slug:         r.env.Slug,
		GitBranch:    r.env.Branch,
		GitSHA:       r.env.Commit,
		DeploymentID: r.d.ID,
	}
	// A repository-backed deployment renders the branch and full commit it
	// fetched (deploy_fetch.go).
	if r.fetched != nil {
		rc.GitBranch, rc.GitSHA = r.fetched.Branch, r.fetched.Commit
	}
	return rc
}

func (r *run) loadRendered() error {
	m, err := manifest.Decode(r.d.RenderedManifest, "json")
	if err != nil {
		return fail(CodeManifestInvalid, "captured manifest does not decode: %v", err)
	}
	manifest.ApplyDefaults(m)
	r.rendered = m
	return nil
}

func firstCode(errs manifest.Errors) string {
	if len(errs) == 0 {
		return CodeManifestInvalid
	}
	if errs[0].Code == CodeVariableMissing {
		return CodeVariableMissing
	}
	return CodeManifestInvalid
}

func scopeJSON(scope map[string]manifest.Value) map[string]any {
	out := make(map[string]any, len(scope))
	for k, v := range scope {
		out[k] = v.Interface()
	}
	return out
}

// prepare resolves every service's image once; retries reuse the result.
func (r *run) prepare(ctx context.Context) error {
	if r.progress.Done("prepare") {
		return nil
	}
	if err := r.start(ctx, "prepare"); err != nil {
		return err
	}
	detail := map[string]string{}
	var buildLog boundedBuffer
	for _, svc := range r.rendered.Spec.Services {
		switch svc.Source.Type {
		case manifest.SourceImage:
			res, err := r.p.Images.Resolve(ctx, svc.Source.Image)
			var ie *image.Error
			if errors.As(err, &ie) {
				return fail(ie.Code, "service %s: %s", svc.Name, ie.Error())
			}
			if err != nil {
				return err
			}
			// A registry image runs by digest; a local one by its ID, so
			// moving its tag later cannot change what this deployment (or a
			// promotion of it) runs.
			detail[svc.Name] = res.Reference
			if res.Digest == "" {
				detail[svc.Name] = res.ID
			}
			detail["id:"+svc.Name] = res.ID
		case manifest.SourceGit:
			res, err := r.buildSource(ctx, svc, &buildLog)
			if err != nil {
				r.progress.Find("prepare").Output = buildLog.String()
				return err
			}
			detail[svc.Name] = res.ImageID
			detail["id:"+svc.Name] = res.ImageID
			detail["commit:"+svc.Name] = res.Commit
		default:
			return fail("source_unsupported", "service %s: source type %q is not supported", svc.Name, svc.Source.Type)
		}
	}
	r.progress.Find("prepare").Detail = detail
	r.progress.Find("prepare").Output = buildLog.String()
	return r.finish(ctx, "prepare", StepSucceeded, "")
}

// buildSource checks out and builds one git source.
func (r *run) buildSource(ctx context.Context, svc manifest.Service, out *boundedBuffer) (*build.BuildResult, error) {
	if r.p.Builds == nil {
		return nil, fail("source_unsupported", "service %s: this worker cannot build git sources", svc.Name)
	}
	repo := svc.Source.Repository
	var snapshot []byte
	if repo == nil || repo.Self {
		// "self" is the manifest repository at the fetched commit (deploy_fetch.go).
		self, err := r.selfRepository(ctx, svc.Name)
		if err != nil {
			return nil, err
		}
		repo = self
		if snapshot, err = r.selfSnapshot(ctx); err != nil {
			return nil, err
		}
	}
	auth, err := r.repositoryAuth(ctx, repo.URL)
	if err != nil {
		return nil, err
	}
	req := build.SourceRequest{
		URL: repo.URL, Branch: repo.Branch, Commit: repo.Commit, Auth: auth,
		Owner:    build.Owner{Team: r.d.TeamID, App: r.app.ID, Env: r.env.ID},
		Timeout:  r.p.PrepareTimeout,
		Output:   out,
		Snapshot: snapshot,
	}
	if b := svc.Source.Build; b != nil {
		req.Dockerfile, req.Context, req.Args, req.Target = b.Dockerfile, b.Context, b.Args, b.Target
	}
	fmt.Fprintf(out, "== building service %s from %s\n", svc.Name, build.RedactURL(repo.URL))
	res, err := r.p.Builds.PrepareSource(ctx, req)
	if err != nil {
		if code := build.ErrorCode(err); code != "" {
			return nil, fail(code, "service %s: %v", svc.Name, err)
		}
		return nil, err
	}
	return res, nil
}

// boundedBuffer keeps the first MaxLogBytes of build output.
type boundedBuffer struct {
	strings.Builder
	truncated bool
}

// MaxLogBytes bounds the build output kept on a deployment.
const MaxLogBytes = 1 << 20

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := MaxLogBytes - b.Len(); room < len(p) {
		if room > 0 {
			b.Builder.Write(p[:room])
		}
		b.truncated = true
		return len(p), nil
	}
	return b.Builder.Write(p)
}

func (r *run) images() map[string]string {
	out := map[string]string{}
	if prep := r.progress.Find("prepare"); prep != nil {
		for k, v := range prep.Detail {
			if !strings.Contains(k, ":") {
				out[k] = v
			}
		}
	}
	return out
}

// plan computes what should run, checks it against what runs, and creates
// the networks, volumes, configs and secrets the services need.
func (r *run) plan(ctx context.Context) error {
	desired, err := r.buildDesired(ctx)
	if err != nil {
		return err
	}
	r.desired = desired
	observed, err := r.p.Driver.Observe(ctx, r.envRef())
	if err != nil {
		return err
	}
	actions, err := swarm.Plan(observed, desired)
	if err != nil {
		return fail(codeOf(err, "plan_failed"), "%v", err)
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
	// `path` files come from the deployment's repository record (deploy_fetch.go).
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
			return swarm.DesiredState{}, fail(codeOf(err, "plan_failed"), "%v", err)
		}
		if err := r.p.Driver.EnsureNetworks(ctx, first); err != nil {
			return swarm.DesiredState{}, asFailure(err)
		}
		network := swarm.IngressNetworkName(in.EnvShortID)
		if in.IngressProxies, err = r.p.Routes.Connect(ctx, r.env, network); err != nil {
			return swarm.DesiredState{}, err
		}
	}
	desired, err := swarm.Desired(in)
	if err != nil {
		return swarm.DesiredState{}, fail(codeOf(err, "plan_failed"), "%v", err)
	}
	return desired, nil
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

func codeOf(err error, def string) string {
	if c := swarm.Code(err); c != "" {
		return c
	}
	return def
}

// asFailure turns a runtime error with a code into a deployment failure;
// Docker being unreachable stays an error River retries.
func asFailure(err error) error {
	code := swarm.Code(err)
	if code == "" || code == swarm.CodeDockerUnavailable {
		return err
	}
	return &Failure{Code: code, Message: err.Error()}
}

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
				return &Failure{Code: code, Message: err.Error()}
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
		if err := r.p.Routes.Activate(ctx, r.d, r.env, r.d.RenderedManifest); err != nil {
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
	if err := r.p.Driver.WaitConverged(ctx, svc, r.p.ConvergenceTimeout); err != nil {
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

// finishFailed records the failure and applies the environment's rollback
// policy.
func (r *run) finishFailed(ctx context.Context, f *Failure) error {
	d, err := r.p.transitionTx(ctx, func(tx *store.Store) (store.Deployment, error) {
		return tx.FailDeployment(ctx, r.d.TeamID, r.d.ID, f.Code, f.Message)
	})
	if err != nil {
		if errors.Is(err, store.ErrInvalidTransition) {
			return nil // cancelled or superseded meanwhile
		}
		return err
	}
	r.d = d
	r.observe("failed")
	r.event(ctx, "deployment.failed", map[string]any{"code": f.Code, "message": f.Message})
	if !r.rollsBack(f.Code) {
		return nil
	}
	return r.rollback(ctx)
}

// rollsBack: only a rollout failure of a deployment that is not itself a
// restore, in an environment whose policy is automatic.
func (r *run) rollsBack(code string) bool {
	if code != swarm.CodeRolloutFailed && code != swarm.CodeConvergenceTimeout {
		return false
	}
	if r.d.Origin == store.OriginRollback || r.d.Origin == store.OriginRestore || r.env.Kind == store.KindPreview {
		return false
	}
	return r.rollbackPolicy() == manifest.RollbackAutomatic
}

func (r *run) rollbackPolicy() string {
	if r.rendered != nil {
		if block, ok := r.rendered.Spec.Environments[r.env.Name]; ok && block.Rollback != "" {
			return block.Rollback
		}
	}
	if r.env.Rollback != "" {
		return r.env.Rollback
	}
	if r.env.PromoteFrom != "" {
		return manifest.RollbackAutomatic
	}
	return manifest.RollbackManual
}

// rollback restores the environment's last successful deployment as a new
// deployment, or records why it cannot.
func (r *run) rollback(ctx context.Context) error {
	last, err := r.p.Store.LatestSucceededDeployment(ctx, r.d.TeamID, r.env.ID)
	if errors.Is(err, store.ErrNotFound) {
		r.event(ctx, CodeRollbackUnavailable, map[string]any{"reason": "no earlier deployment of this environment succeeded"})
		return nil
	}
	if err != nil {
		return err
	}
	return r.p.Store.WithTx(ctx, func(tx *store.Store) error {
		nd, err := tx.CreateDeployment(ctx, r.d.TeamID, store.DeploymentParams{
			EnvironmentID: r.env.ID,
			Revision:      last.Revision,
			Origin:        store.OriginRollback,
			RestoredFrom:  last.ID,
			Actor:         "rollback:" + r.d.ID,
		})
		if err != nil {
			return err
		}
		if _, err := tx.RecordEvent(ctx, r.d.TeamID, store.EventParams{
			Actor: "worker", Verb: "deployment.rollback", ObjectType: "deployment", ObjectID: r.d.ID,
			Details: map[string]any{"restores": last.ID, "rollback_deployment": nd.ID},
		}); err != nil {
			return err
		}
		return r.p.Enqueue(ctx, tx, DeployArgs{TeamID: r.d.TeamID, DeploymentID: nd.ID})
	})
}
