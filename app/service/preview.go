package service

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/store"
)

// Previews creates, deploys, lists and deletes previews: disposable
// deployments of one branch (and optional slot) of a repository-backed
// application's manifest repository. The dashboard, the API and the GitHub
// pull-request flow (PreviewDeployer) share it.
type Previews struct {
	Store  *store.Store
	Limits PreviewLimits
	// ListHeads lists the repository's branch heads (branch -> commit), as
	// git ls-remote does; concurrent reads of one repository should share
	// one listing (build.Lister). Nil reports every branch as unknown.
	ListHeads func(ctx context.Context, url string) (map[string]string, error)
	Now       func() time.Time
}

// PreviewLimits are the daemon's [previews] counts: creating a preview
// beyond either fails with preview_limit_reached. MaxPerApplication 0
// disables previews.
type PreviewLimits struct {
	MaxPerApplication int
	MaxTotal          int
}

// PreviewRequest names a preview by branch and optional slot.
type PreviewRequest struct {
	Branch string
	Slot   string
	// Deploy requests the first deployment of a preview this call creates;
	// an existing preview is never redeployed by Create.
	Deploy bool
	// Untrusted marks a new preview as coming from code nobody with write
	// access vouched for (a pull request from a fork): it never mounts a
	// stored secret, whatever the secret's access list says. Branches of
	// GitHub's pull/<n>/head refs are always untrusted.
	Untrusted bool
}

// Preview is a preview with its newest deployment (nil before the first).
type Preview struct {
	Environment store.Environment
	Deployment  *store.Deployment
	// Created is false when Create found the preview already there.
	Created bool
}

// Preview error codes.
const (
	CodePreviewRequiresRepository = "preview_requires_repository"
	CodePreviewLimitReached       = "preview_limit_reached"
	CodePreviewDeleting           = "preview_deleting"
)

func (p *Previews) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

var previewSlot = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

func checkPreviewRequest(r PreviewRequest) error {
	if msg := checkBranchName(r.Branch); msg != "" {
		return &InputError{Field: "branch", Code: "branch_invalid", Message: msg}
	}
	if r.Slot != "" && !previewSlot.MatchString(r.Slot) {
		return &InputError{Field: "slot", Code: "slot_invalid",
			Message: "slot must be 1–40 letters, digits, dots, dashes or underscores, starting with a letter or digit"}
	}
	return nil
}

// untrustedRef: GitHub's pull/<n>/head refs are how fork pull requests
// reach the base repository, so their code is untrusted.
func untrustedRef(branch string) bool {
	return strings.HasPrefix(branch, "pull/")
}

// Create creates the preview of req's branch and slot and, with
// req.Deploy, requests its first deployment. Creating a preview that
// exists returns it and its latest deployment without redeploying.
// Fails with preview_requires_repository for applications whose manifest
// does not come from a repository, preview_limit_reached beyond the
// daemon's limits, preview_deleting while a preview of that branch and
// slot is being deleted.
func (p *Previews) Create(ctx context.Context, a Actor, enqueue Enqueue, appID string, req PreviewRequest) (Preview, error) {
	return p.create(ctx, a.TeamID, a.String(), enqueue, appID, req)
}

func (p *Previews) create(ctx context.Context, teamID, actor string, enqueue Enqueue, appID string, req PreviewRequest) (Preview, error) {
	if err := checkPreviewRequest(req); err != nil {
		return Preview{}, err
	}
	var out Preview
	err := p.Store.WithTx(ctx, func(tx *store.Store) error {
		app, rev, err := repositoryApplication(ctx, tx, teamID, appID)
		if err != nil {
			return err
		}
		// Counting and creating happen under one daemon-wide lock, which
		// also orders concurrent creations of the same branch and slot.
		counts, err := tx.LockPreviewCounts(ctx, teamID, app.ID)
		if err != nil {
			return err
		}
		if out, err = existingPreview(ctx, tx, teamID, app.ID, req.Branch, req.Slot); err == nil || !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := p.checkLimits(counts); err != nil {
			return err
		}
		slug := manifest.PreviewSlug(app.Name, req.Branch, req.Slot)
		env, err := tx.CreateEnvironment(ctx, teamID, store.EnvironmentParams{
			ApplicationID: app.ID, Kind: store.KindPreview, Name: slug, Slug: slug,
			Branch: req.Branch, Slot: req.Slot, Untrusted: req.Untrusted || untrustedRef(req.Branch),
		})
		if err != nil {
			return conflictInput(err, fmt.Sprintf("the name %s is taken by an environment of %s", slug, app.Name))
		}
		if err := quota.CheckCounts(ctx, tx, teamID, quota.Add{Quota: quota.Previews, N: 1, Field: "branch"}); err != nil {
			return quotaInput(err)
		}
		out = Preview{Environment: env, Created: true}
		if _, err := tx.RecordEvent(ctx, teamID, store.EventParams{
			Actor: actor, Verb: "preview.create", ObjectType: "environment", ObjectID: env.ID,
			Details: map[string]any{"application_id": app.ID, "branch": env.Branch, "slot": env.Slot, "slug": env.Slug, "untrusted": env.Untrusted},
		}); err != nil {
			return err
		}
		if !req.Deploy {
			return nil
		}
		d, err := requestPreviewDeployment(ctx, tx, teamID, actor, enqueue, env, rev.Revision, "")
		if err != nil {
			return err
		}
		out.Deployment = &d
		return nil
	})
	return out, err
}

// existingPreview returns the preview of branch and slot with its latest
// deployment; ErrNotFound when there is none, preview_deleting while it is
// being deleted.
func existingPreview(ctx context.Context, tx *store.Store, teamID, appID, branch, slot string) (Preview, error) {
	env, err := tx.GetPreview(ctx, teamID, appID, branch, slot)
	if err != nil {
		return Preview{}, err
	}
	if env.DeletingAt != nil {
		return Preview{}, deleting(env)
	}
	return withLatestDeployment(ctx, tx, env)
}

func withLatestDeployment(ctx context.Context, st *store.Store, env store.Environment) (Preview, error) {
	out := Preview{Environment: env}
	d, err := st.LatestDeployment(ctx, env.TeamID, env.ID)
	switch {
	case err == nil:
		out.Deployment = &d
	case !errors.Is(err, store.ErrNotFound):
		return Preview{}, err
	}
	return out, nil
}

func deleting(env store.Environment) error {
	return &InputError{Field: "preview", Code: CodePreviewDeleting,
		Message: fmt.Sprintf("preview %s is being deleted; create it again once it is gone", env.Slug)}
}

func (p *Previews) checkLimits(c store.PreviewCounts) error {
	l := p.Limits
	switch {
	case l.MaxPerApplication <= 0:
		return &InputError{Field: "branch", Code: CodePreviewLimitReached,
			Message: "previews are disabled on this daemon ([previews] max_per_application = 0)"}
	case c.Application >= l.MaxPerApplication:
		return &InputError{Field: "branch", Code: CodePreviewLimitReached,
			Message: fmt.Sprintf("the application has %d previews, the daemon's max_per_application: delete one first (slipway preview delete or prune)", c.Application)}
	case l.MaxTotal > 0 && c.Total >= l.MaxTotal:
		return &InputError{Field: "branch", Code: CodePreviewLimitReached,
			Message: fmt.Sprintf("the daemon runs %d previews, its max_total: delete one first", c.Total)}
	}
	return nil
}

// repositoryApplication loads the application and its saved revision and
// checks its manifest comes from a repository.
func repositoryApplication(ctx context.Context, st *store.Store, teamID, appID string) (store.Application, store.ManifestRevision, error) {
	app, err := st.GetApplication(ctx, teamID, appID)
	if err != nil {
		return app, store.ManifestRevision{}, err
	}
	rev, err := st.GetCurrentManifestRevision(ctx, teamID, app.ID)
	if errors.Is(err, store.ErrNotFound) {
		return app, rev, &InputError{Field: "application", Code: CodePreviewRequiresRepository,
			Message: fmt.Sprintf("%s has no saved manifest: previews need a manifest connected to a repository (spec.manifest.repository)", app.Name)}
	}
	if err != nil {
		return app, rev, err
	}
	if _, ok := manifestRepository(rev); !ok {
		return app, rev, &InputError{Field: "application", Code: CodePreviewRequiresRepository,
			Message: fmt.Sprintf("only repository-backed applications have previews: connect %s's manifest to a repository (spec.manifest.repository)", app.Name)}
	}
	return app, rev, nil
}

// manifestRepository returns the repository URL the saved manifest reads
// from.
func manifestRepository(rev store.ManifestRevision) (string, bool) {
	m, err := manifest.Decode(rev.Manifest, "json")
	if err != nil || m.Spec.Manifest == nil || m.Spec.Manifest.Repository == nil {
		return "", false
	}
	return m.Spec.Manifest.Repository.URL, true
}

// requestPreviewDeployment requests a build of the preview's branch head,
// or of commit on it when one is given.
func requestPreviewDeployment(ctx context.Context, tx *store.Store, teamID, actor string, enqueue Enqueue, env store.Environment, revision int64, commit string) (store.Deployment, error) {
	d, err := tx.CreateDeployment(ctx, teamID, store.DeploymentParams{
		EnvironmentID: env.ID, Revision: revision, Origin: store.OriginBuild, Actor: actor,
	})
	if err != nil {
		return store.Deployment{}, err
	}
	if commit != "" {
		if err := tx.SetDeploymentRef(ctx, teamID, d.ID, store.GitRef{Branch: env.Branch, Commit: commit}); err != nil {
			return store.Deployment{}, err
		}
	}
	if err := enqueue(ctx, tx, jobs.DeployArgs{TeamID: teamID, DeploymentID: d.ID}); err != nil {
		return store.Deployment{}, fmt.Errorf("queue deployment: %w", err)
	}
	_, err = tx.RecordEvent(ctx, teamID, store.EventParams{
		Actor: actor, Verb: "deployment.request", ObjectType: "deployment", ObjectID: d.ID,
		Details: map[string]any{"environment": env.Name, "preview": true, "branch": env.Branch, "commit": commit, "revision": revision, "origin": string(store.OriginBuild)},
	})
	return d, err
}

// Deploy redeploys the preview with that slug at its branch head.
func (p *Previews) Deploy(ctx context.Context, a Actor, enqueue Enqueue, appID, slug string) (store.Deployment, error) {
	return p.deploy(ctx, a.TeamID, a.String(), enqueue, appID, slug, "")
}

func (p *Previews) deploy(ctx context.Context, teamID, actor string, enqueue Enqueue, appID, slug, commit string) (store.Deployment, error) {
	var d store.Deployment
	err := p.Store.WithTx(ctx, func(tx *store.Store) error {
		_, rev, err := repositoryApplication(ctx, tx, teamID, appID)
		if err != nil {
			return err
		}
		env, err := tx.GetPreviewBySlug(ctx, teamID, appID, slug)
		if err != nil {
			return err
		}
		if env.DeletingAt != nil {
			return deleting(env)
		}
		d, err = requestPreviewDeployment(ctx, tx, teamID, actor, enqueue, env, rev.Revision, commit)
		return err
	})
	return d, err
}

// Get returns the preview with that slug and its latest deployment.
func (p *Previews) Get(ctx context.Context, a Actor, appID, slug string) (Preview, error) {
	env, err := p.Store.GetPreviewBySlug(ctx, a.TeamID, appID, slug)
	if err != nil {
		return Preview{}, err
	}
	return withLatestDeployment(ctx, p.Store, env)
}

// Delete starts deleting the preview with that slug: it is marked as
// being deleted (no deployment starts any more, a waiting one is
// cancelled) and the worker removes its services, routes, networks and
// every volume its deployments created, checks none is left, then deletes
// the preview itself (jobs.PreviewDeleteWorker). Deleting a preview being
// deleted again is accepted.
func (p *Previews) Delete(ctx context.Context, a Actor, enqueue Enqueue, appID, slug string) (store.Environment, error) {
	var out store.Environment
	err := p.Store.WithTx(ctx, func(tx *store.Store) error {
		env, err := tx.GetPreviewBySlug(ctx, a.TeamID, appID, slug)
		if err != nil {
			return err
		}
		out, err = p.markDeleting(ctx, tx, a.TeamID, a.String(), enqueue, env)
		return err
	})
	return out, err
}

func (p *Previews) markDeleting(ctx context.Context, tx *store.Store, teamID, actor string, enqueue Enqueue, env store.Environment) (store.Environment, error) {
	marked, err := tx.MarkPreviewDeleting(ctx, teamID, env.ID, p.now())
	if err != nil {
		return marked, err
	}
	if live, err := tx.LiveDeployment(ctx, teamID, env.ID); err == nil && live.State == store.StateRequested {
		cancelled, err := tx.TransitionDeployment(ctx, teamID, live.ID, []store.DeploymentState{store.StateRequested}, store.StateCancelled)
		switch {
		case errors.Is(err, store.ErrInvalidTransition):
		case err != nil:
			return marked, err
		default:
			// Like every other cancellation: the pull request's comment
			// and commit status stop saying queued.
			if err := jobs.NotifyGitHubTx(ctx, tx, enqueue, cancelled); err != nil {
				return marked, fmt.Errorf("queue GitHub notification: %w", err)
			}
		}
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return marked, err
	}
	if err := enqueue(ctx, tx, jobs.PreviewDeleteArgs{TeamID: teamID, EnvironmentID: env.ID}); err != nil {
		return marked, fmt.Errorf("queue deletion of preview %s: %w", env.Slug, err)
	}
	_, err = tx.RecordEvent(ctx, teamID, store.EventParams{
		Actor: actor, Verb: "preview.delete", ObjectType: "environment", ObjectID: env.ID,
		Details: map[string]any{"application_id": env.ApplicationID, "branch": env.Branch, "slot": env.Slot, "slug": env.Slug},
	})
	return marked, err
}

// Routes returns the routes the preview with that slug serves now (what
// its last successful deployment activated on the gateway).
func (p *Previews) Routes(ctx context.Context, a Actor, appID, slug string) ([]store.DeployedRoute, error) {
	env, err := p.Store.GetPreviewBySlug(ctx, a.TeamID, appID, slug)
	if err != nil {
		return nil, err
	}
	return p.Store.ListEnvironmentRoutes(ctx, a.TeamID, env.ID)
}
