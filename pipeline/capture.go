package pipeline

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

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
	if err := r.checkQuota(ctx, capture.Rendered); err != nil {
		return err
	}
	if capture.SpecHash, err = r.specHash(ctx, capture.Rendered); err != nil {
		return err
	}
	d, err := r.p.Store.RecordCapture(ctx, r.d.TeamID, r.d.ID, capture)
	if errors.Is(err, store.ErrAlreadyCaptured) {
		d, err = r.p.Store.GetDeployment(ctx, r.d.TeamID, r.d.ID)
	}
	if err != nil {
		return err
	}
	r.d.CapturedManifest, r.d.RenderedManifest, r.d.Variables, r.d.SpecHash = d.CapturedManifest, d.RenderedManifest, d.Variables, d.SpecHash
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
	// (fetch.go).
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
	if err := manifest.CheckRelease(before, after, r.env.Name); err != nil {
		return store.Capture{}, asCoded(err)
	}
	srcProgress, _ := ParseProgress(src.Steps)
	if err := r.adoptPrepared(ctx, srcProgress); err != nil {
		return store.Capture{}, err
	}
	return capture, nil
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
	var branch, commit string
	if r.fetched != nil { // fetch.go
		branch, commit = r.fetched.Branch, r.fetched.Commit
	}
	return manifest.DeploymentContext(RenderTarget(r.env), r.d.ID, branch, commit)
}

// RenderTarget is env as the manifest's system variables see it.
func RenderTarget(env store.Environment) manifest.Target {
	return manifest.Target{
		Name: env.Name, Slug: env.Slug, Preview: env.Kind == store.KindPreview,
		Branch: env.Branch, Commit: env.Commit,
	}
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

// specHash is the identity of what the deployment runs: manifest.SpecHash
// of its rendered manifest and the repository files it mounts (those the
// deployment, or the one it restores or promotes, read).
func (r *run) specHash(ctx context.Context, rendered []byte) (string, error) {
	m, err := manifest.Decode(rendered, "json")
	if err != nil {
		return "", fail(CodeManifestInvalid, "the rendered manifest does not decode: %v", err)
	}
	files, err := r.repositoryFiles(ctx)
	if err != nil {
		return "", err
	}
	hash, err := manifest.SpecHash(m, files)
	if err != nil {
		return "", fail(CodeManifestInvalid, "%v", err)
	}
	return hash, nil
}
