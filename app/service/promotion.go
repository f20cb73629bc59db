package service

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// ImageInspector says whether an image (by ID or reference) is present on
// the engine. The API wires the Docker client; nil skips the check.
type ImageInspector interface {
	ImagePresent(ctx context.Context, ref string) (bool, error)
}

// SecretIssue is one kind of secret refusal with every name it concerns.
type SecretIssue struct {
	Code  string   `json:"code"`
	Names []string `json:"names"`
}

// SecretChecker lists every reason env cannot mount what the rendered
// manifest mounts, changing nothing (secrets.Service.Problems, adapted by
// the caller since this package does not import secrets). Nil skips it.
type SecretChecker interface {
	SecretIssues(ctx context.Context, teamID string, env store.Environment, m *manifest.Manifest) ([]SecretIssue, error)
}

// SourceRuntime reports how the source's services differ from the
// deployment they should run (image, replicas, health), one line each;
// empty means every service runs as deployed. Nil skips the check.
type SourceRuntime interface {
	DeploymentDrift(ctx context.Context, env store.Environment, d store.Deployment) ([]string, error)
}

// PromoteOptions choose what a promotion deploys and how it is checked.
type PromoteOptions struct {
	// DeploymentID is the source deployment the caller reviewed; the
	// promotion fails with promotion_source_changed once it is no longer
	// the source's current one.
	DeploymentID string
	// ReleaseID deploys an earlier release of the application to any
	// environment, without checking a source.
	ReleaseID string
	// Plan reports what would happen and changes nothing.
	Plan bool

	Images  ImageInspector
	Secrets SecretChecker
	Runtime SourceRuntime
}

// PromotionImage is one service's prepared image in a release.
type PromotionImage struct {
	Service   string `json:"service"`
	Reference string `json:"reference"`
	ImageID   string `json:"image_id,omitempty"`
	// Present is nil when no inspector was available.
	Present *bool `json:"present,omitempty"`
}

// PromotionPlan is what a promotion would do.
type PromotionPlan struct {
	Environment string       `json:"environment"`
	Origin      store.Origin `json:"origin"`
	// SourceEnvironment and SourceDeployment are where the release comes
	// from (the source's current deployment); empty for --release.
	SourceEnvironment string `json:"source_environment,omitempty"`
	SourceDeployment  string `json:"source_deployment,omitempty"`
	// ReleaseID is the build deployment whose images are deployed.
	ReleaseID          string `json:"release_id"`
	ReleaseEnvironment string `json:"release_environment"`
	ReleaseRevision    int64  `json:"release_revision"`
	// CurrentDeployment is what the environment runs now, "" when nothing.
	CurrentDeployment string            `json:"current_deployment,omitempty"`
	Images            []PromotionImage  `json:"images"`
	Changes           []manifest.Change `json:"changes"`
	// NewVolumes are created empty by the promotion.
	NewVolumes []string      `json:"new_volumes"`
	Secrets    []SecretIssue `json:"secrets"`
	// Problems are the refusals a promotion would meet now.
	Problems []PromotionProblem `json:"problems"`
	// Warnings are the imports that would not connect (import_unconnected),
	// a telemetry receiver without the grant (telemetry_not_granted) and
	// the manifest warnings the target's variables decide.
	Warnings manifest.Errors `json:"warnings,omitempty"`
}

// PromotionProblem is one refused precondition.
type PromotionProblem struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// PromotionError is a promotion refused by its preconditions, every one
// found. errors.As(err, **InputError) yields the first, with a message
// naming them all.
type PromotionError struct {
	Problems []PromotionProblem
}

func (e *PromotionError) Error() string { return e.first().Error() }

func (e *PromotionError) first() *InputError {
	p0 := e.Problems[0]
	first := InputError{Field: p0.Field, Code: p0.Code, Message: p0.Message}
	if len(e.Problems) > 1 {
		msgs := make([]string, len(e.Problems))
		for i, p := range e.Problems {
			msgs[i] = p.Code + ": " + p.Message
		}
		first.Message = strings.Join(msgs, "; ")
	}
	return &first
}

// As lets the front ends answer it like any other input error.
func (e *PromotionError) As(target any) bool {
	if t, ok := target.(**InputError); ok {
		*t = e.first()
		return true
	}
	return false
}

// PromotionResult is a plan and, unless only planned, the deployment
// requested.
type PromotionResult struct {
	Plan       PromotionPlan
	Deployment *store.Deployment
}

// promotion is what the checks resolved.
type promotion struct {
	target    store.Environment
	sourceEnv *store.Environment
	source    store.Deployment // the deployment whose capture and images are reused
	release   store.Release
	rendered  *manifest.Manifest
}

// PromoteEnvironment deploys the release of the target's source
// environment's current deployment (or, with ReleaseID, an earlier
// release) to the target, reusing its images. Every precondition is
// checked before anything is saved, and reported all at once as a
// *PromotionError; acceptance checks the source again in the transaction
// that requests the deployment and queues its job.
func PromoteEnvironment(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName string, opts PromoteOptions) (PromotionResult, error) {
	p, plan, err := checkPromotion(ctx, st, a, appID, envName, opts)
	if err != nil {
		return PromotionResult{}, err
	}
	res := PromotionResult{Plan: plan}
	if opts.Plan {
		return res, nil
	}
	if len(plan.Problems) > 0 {
		return res, &PromotionError{Problems: plan.Problems}
	}
	err = st.WithTx(ctx, func(tx *store.Store) error {
		// CreateDeployment locks the target's row; a deployment requested
		// meanwhile still makes the promotion wait its turn behind it.
		if _, err := tx.LiveDeployment(ctx, a.TeamID, p.target.ID); err == nil {
			return busy(p.target)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if p.sourceEnv != nil {
			now, err := tx.LatestSucceededDeployment(ctx, a.TeamID, p.sourceEnv.ID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if now.ID != p.source.ID {
				return &InputError{Field: "deployment_id", Code: "promotion_source_changed",
					Message: fmt.Sprintf("%s moved on from deployment %s while the promotion was checked: review its current deployment and promote again", p.sourceEnv.Name, p.source.ID)}
			}
		}
		origin := store.OriginPromotion
		if p.sourceEnv == nil {
			origin = store.OriginRelease
		}
		d, err := tx.CreateDeployment(ctx, a.TeamID, store.DeploymentParams{
			EnvironmentID: p.target.ID, Revision: p.source.Revision, Origin: origin,
			PromotedFrom: p.source.ID, Actor: a.String(),
		})
		if err != nil {
			return err
		}
		if err := enqueue(ctx, tx, jobs.DeployArgs{TeamID: a.TeamID, DeploymentID: d.ID}); err != nil {
			return fmt.Errorf("queue deployment: %w", err)
		}
		res.Deployment = &d
		return record(ctx, tx, a, "deployment.request", "deployment", d.ID, map[string]any{
			"environment": p.target.Name, "revision": d.Revision, "origin": string(origin),
			"promoted_from": p.source.ID, "release": p.release.ID,
		})
	})
	return res, err
}

func busy(env store.Environment) error {
	return &InputError{Field: "environment", Code: "application_busy",
		Message: fmt.Sprintf("a deployment of %s is requested or running: wait for it or cancel it first", env.Name)}
}

// checkPromotion resolves the source and release and runs every check,
// returning the plan with its problems. Errors are only for a target that
// cannot be promoted at all and for failures to read.
func checkPromotion(ctx context.Context, st *store.Store, a Actor, appID, envName string, opts PromoteOptions) (promotion, PromotionPlan, error) {
	var p promotion
	plan := PromotionPlan{Environment: envName, Images: []PromotionImage{}, Changes: []manifest.Change{},
		NewVolumes: []string{}, Secrets: []SecretIssue{}, Problems: []PromotionProblem{}}
	problem := func(field, code, format string, args ...any) {
		plan.Problems = append(plan.Problems, PromotionProblem{Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	target, err := EnvironmentByName(ctx, st, a.TeamID, appID, envName) // previews never receive promotions
	if err != nil {
		return p, plan, err
	}
	p.target = target
	switch {
	case opts.ReleaseID != "":
		if opts.DeploymentID != "" {
			return p, plan, &InputError{Field: "release_id", Code: "promotion_options_conflict", Message: "give --deployment or --release, not both"}
		}
		rel, err := st.GetRelease(ctx, a.TeamID, opts.ReleaseID)
		if err == nil && rel.ApplicationID != appID {
			err = store.ErrNotFound
		}
		if errors.Is(err, store.ErrNotFound) {
			return p, plan, &InputError{Field: "release_id", Code: "release_unknown",
				Message: fmt.Sprintf("%s is not a release of this application: list them with `slipway app releases`", opts.ReleaseID)}
		}
		if err != nil {
			return p, plan, err
		}
		p.release, p.source = rel, rel.Deployment
		plan.Origin = store.OriginRelease
	case target.PromoteFrom == "":
		return p, plan, &InputError{Field: "environment", Code: "environment_not_promoted",
			Message: fmt.Sprintf("%s does not receive promotions: set its source with `slipway env source --promote-from`, or deploy a release with --release", target.Name)}
	default:
		src, err := st.GetEnvironment(ctx, a.TeamID, target.PromoteFrom)
		if err != nil {
			return p, plan, err
		}
		p.sourceEnv = &src
		plan.Origin, plan.SourceEnvironment = store.OriginPromotion, src.Name
		ready, err := checkSource(ctx, st, a, src, opts, problem)
		if err != nil || !ready.ok {
			return p, plan, err
		}
		p.source, plan.SourceDeployment = ready.current, ready.current.ID
		if p.release, err = st.ReleaseOf(ctx, a.TeamID, p.source.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return p, plan, err
		}
	}
	plan.ReleaseID, plan.ReleaseEnvironment, plan.ReleaseRevision = p.release.ID, p.release.EnvironmentName, p.release.Revision
	if err := checkRelease(ctx, a, &p, &plan, opts, problem); err != nil {
		return p, plan, err
	}
	if _, err := st.LiveDeployment(ctx, a.TeamID, target.ID); err == nil {
		b := busy(target).(*InputError)
		problem(b.Field, b.Code, "%s", b.Message)
	} else if !errors.Is(err, store.ErrNotFound) {
		return p, plan, err
	}
	return p, plan, planChanges(ctx, st, a, &p, &plan)
}

type sourceState struct {
	ok      bool
	current store.Deployment
}

// checkSource finds the source's current deployment and checks it is
// ready: succeeded, its latest finished one, running as deployed, and the
// one the caller reviewed.
func checkSource(ctx context.Context, st *store.Store, a Actor, src store.Environment, opts PromoteOptions,
	problem func(field, code, format string, args ...any)) (sourceState, error) {
	current, err := st.LatestSucceededDeployment(ctx, a.TeamID, src.ID)
	if errors.Is(err, store.ErrNotFound) {
		problem("environment", "promotion_source_not_ready", "%s has no successful deployment to promote yet", src.Name)
		return sourceState{}, nil
	}
	if err != nil {
		return sourceState{}, err
	}
	if opts.DeploymentID != "" && opts.DeploymentID != current.ID {
		problem("deployment_id", "promotion_source_changed",
			"%s is no longer %s's current deployment (%s is): review it and promote again", opts.DeploymentID, src.Name, current.ID)
	}
	latest, err := st.LatestFinishedDeployment(ctx, a.TeamID, src.ID)
	if err != nil {
		return sourceState{}, err
	}
	if latest.ID != current.ID {
		problem("environment", "promotion_source_not_ready",
			"%s's latest deployment %s %s after %s succeeded: fix or restore it first", src.Name, latest.ID, latest.State, current.ID)
	}
	if opts.Runtime != nil {
		drift, err := opts.Runtime.DeploymentDrift(ctx, src, current)
		if err != nil {
			return sourceState{}, err
		}
		if len(drift) > 0 {
			problem("environment", "promotion_source_not_ready",
				"%s does not run deployment %s as deployed: %s", src.Name, current.ID, strings.Join(drift, "; "))
		}
	}
	return sourceState{ok: true, current: current}, nil
}

// checkRelease renders the release's own manifest for the target and
// checks its build inputs, images and secrets.
func checkRelease(ctx context.Context, a Actor, p *promotion, plan *PromotionPlan, opts PromoteOptions,
	problem func(field, code, format string, args ...any)) error {
	if p.source.CapturedManifest == nil {
		problem("release_id", "release_unavailable", "deployment %s never captured a manifest", p.source.ID)
		return nil
	}
	saved, err := manifest.Decode(p.source.CapturedManifest, "json")
	if err != nil {
		problem("release_id", "release_unavailable", "the release's manifest does not decode: %v", err)
		return nil
	}
	rc := manifest.PlanContext(saved, pipeline.RenderTarget(p.target))
	rendered, errs := manifest.Render(saved, rc)
	if len(errs) > 0 {
		problem("environment", "release_incompatible", "the release does not render for %s: %s", p.target.Name, errs.Error())
	} else {
		p.rendered = rendered
		// Warnings that the target's own variables decide (rollout.order...).
		plan.Warnings = append(plan.Warnings, manifest.RenderedWarnings(saved, rendered, rc)...)
		if before, err := manifest.Decode(p.source.RenderedManifest, "json"); err == nil {
			if err := manifest.CheckRelease(before, rendered, p.target.Name); err != nil {
				problem("environment", manifest.CodeReleaseIncompatible, "%v", err)
			}
		}
	}
	if err := checkImages(ctx, p.source, plan, opts.Images, problem); err != nil {
		return err
	}
	if opts.Secrets != nil && p.rendered != nil {
		issues, err := opts.Secrets.SecretIssues(ctx, a.TeamID, p.target, p.rendered)
		if err != nil {
			return err
		}
		if len(issues) > 0 {
			plan.Secrets = issues
			parts := make([]string, len(issues))
			for i, is := range issues {
				parts[i] = is.Code + ": " + strings.Join(is.Names, ", ")
			}
			problem("secrets", "secrets_unavailable", "%s cannot mount every secret the release mounts (%s): set them or add the environment to their access lists",
				p.target.Name, strings.Join(parts, "; "))
		}
	}
	return nil
}

// checkImages lists the release's prepared images and whether each is
// still on the engine: local ones by image ID, others by reference.
func checkImages(ctx context.Context, src store.Deployment, plan *PromotionPlan, inspector ImageInspector,
	problem func(field, code, format string, args ...any)) error {
	progress, _ := pipeline.ParseProgress(src.Steps)
	prep := progress.Find("prepare")
	if prep == nil || prep.State != pipeline.StepSucceeded {
		problem("release_id", "image_unavailable", "deployment %s never prepared its images", src.ID)
		return nil
	}
	var missing []string
	for svc, ref := range prep.Detail {
		if strings.Contains(svc, ":") {
			continue
		}
		img := PromotionImage{Service: svc, Reference: ref, ImageID: prep.Detail["id:"+svc]}
		if inspector != nil {
			check := img.ImageID
			if check == "" {
				check = ref
			}
			ok, err := inspector.ImagePresent(ctx, check)
			if err != nil {
				return err
			}
			img.Present = &ok
			if !ok {
				missing = append(missing, fmt.Sprintf("%s (%s)", svc, check))
			}
		}
		plan.Images = append(plan.Images, img)
	}
	sort.Slice(plan.Images, func(i, j int) bool { return plan.Images[i].Service < plan.Images[j].Service })
	if len(missing) > 0 {
		sort.Strings(missing)
		problem("images", "image_unavailable", "the release's images are gone from the engine: %s; promote a newer release", strings.Join(missing, ", "))
	}
	return nil
}

// planChanges compares the rendered release with what the target runs.
func planChanges(ctx context.Context, st *store.Store, a Actor, p *promotion, plan *PromotionPlan) error {
	if p.rendered == nil {
		return nil
	}
	current := &manifest.Manifest{}
	d, err := st.LatestSucceededDeployment(ctx, a.TeamID, p.target.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return err
	default:
		plan.CurrentDeployment = d.ID
		if m, err := manifest.Decode(d.RenderedManifest, "json"); err == nil {
			current = m
		}
	}
	plan.Changes = manifest.Diff(current, p.rendered)
	if plan.Changes == nil {
		plan.Changes = []manifest.Change{}
	}
	have := map[string]bool{}
	for _, v := range current.Spec.Volumes {
		have[v.Name] = true
	}
	for _, v := range p.rendered.Spec.Volumes {
		if !have[v.Name] {
			plan.NewVolumes = append(plan.NewVolumes, v.Name)
		}
	}
	if len(p.rendered.Spec.Imports) > 0 { // link_warnings.go
		ls, err := pipeline.LoadLinks(ctx, st, a.TeamID)
		if err != nil {
			return err
		}
		plan.Warnings = append(plan.Warnings, unconnectedWarnings(ls, p.target, p.rendered)...)
	}
	tw, err := TelemetryWarnings(ctx, st, a.TeamID, p.target, p.rendered)
	if err != nil {
		return err
	}
	plan.Warnings = append(plan.Warnings, tw...)
	return nil
}
