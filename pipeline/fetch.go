package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/store"
)

// Codes of repository-backed captures, beside runtime/build's
// (manifest_not_found, file_not_found, branch_not_found, …).
const (
	CodeManifestNameMismatch      = "manifest_name_mismatch"
	CodeManifestConnectionIgnored = "manifest_connection_ignored"
	// AuthorRepository authors the saved revisions adopted from the
	// repository.
	AuthorRepository = "repository"
)

// captureFromRepository captures a repository-backed application: when the
// saved manifest has spec.manifest, the deployment reads the configured
// file at the environment's branch or pinned commit (or the deployment's
// one-off ref), validates it, reads its `path` files at that commit and
// records all of it with the deployment before rendering, so a retry reuses
// the same bytes and never reads the repository again. ok is false for an
// application that is not repository-backed.
func (r *run) captureFromRepository(ctx context.Context, savedJSON json.RawMessage) (capture store.Capture, ok bool, err error) {
	saved, err := manifest.Decode(savedJSON, "json")
	if err != nil || saved.Spec.Manifest == nil || saved.Spec.Manifest.Repository == nil {
		return store.Capture{}, false, nil // renderAndPin reports what does not decode
	}
	conn := saved.Spec.Manifest
	f, err := r.p.Store.GetDeploymentFetch(ctx, r.d.TeamID, r.d.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		f, err = r.fetchManifest(ctx, saved)
		if err != nil {
			return store.Capture{}, true, err
		}
	case err != nil:
		return store.Capture{}, true, err
	}
	m, err := r.checkFetched(ctx, f, saved)
	if err != nil {
		return store.Capture{}, true, err
	}
	r.fetched = &f
	// The saved connection wins over the file's own (see checkFetched).
	m.Spec.Manifest = conn
	raw, err := json.Marshal(m)
	if err != nil {
		return store.Capture{}, true, err
	}
	capture, err = r.renderAndPin(ctx, raw)
	return capture, true, err
}

// fetchRef is what the deployment reads: the one-off ref, else the
// environment's pinned commit or branch, else the manifest connection's.
// The branch (git.branch) is the environment's, or a one-off --branch, even
// when a commit is pinned.
func (r *run) fetchRef(ctx context.Context, conn *manifest.Repository) (branch, commit string, err error) {
	branch = r.env.Branch
	if branch == "" {
		branch = conn.Branch
	}
	ref, err := r.p.Store.GetDeploymentRef(ctx, r.d.TeamID, r.d.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", "", err
	}
	switch {
	case err == nil && ref.Branch != "":
		return ref.Branch, ref.Commit, nil
	case err == nil && ref.Commit != "":
		return branch, ref.Commit, nil
	case r.env.Commit != "" || r.env.Branch != "":
		return branch, r.env.Commit, nil
	}
	return branch, conn.Commit, nil
}

// fetchManifest checks out the manifest repository once, reads the
// manifest file and every `path` file it mounts, and records them.
func (r *run) fetchManifest(ctx context.Context, saved *manifest.Manifest) (store.DeploymentFetch, error) {
	conn := saved.Spec.Manifest
	branch, commit, err := r.fetchRef(ctx, conn.Repository)
	if err != nil {
		return store.DeploymentFetch{}, err
	}
	auth, err := r.repositoryAuth(ctx, conn.Repository.URL)
	if err != nil {
		return store.DeploymentFetch{}, err
	}
	snapshot, err := r.snapshotBundle(ctx, r.d.ID)
	if err != nil {
		return store.DeploymentFetch{}, err
	}
	co, err := build.CheckoutRepository(ctx, build.CheckoutRequest{URL: conn.Repository.URL, Branch: branch, Commit: commit, Auth: auth, Snapshot: snapshot})
	if err != nil {
		return store.DeploymentFetch{}, buildFailure(sourceFieldPath("spec.manifest.repository", "spec.manifest", err), err)
	}
	defer co.Remove()
	data, err := co.ReadManifest(conn.Path)
	if err != nil {
		return store.DeploymentFetch{}, buildFailure("spec.manifest.path", err)
	}
	f := store.DeploymentFetch{
		DeploymentID: r.d.ID, RepositoryURL: conn.Repository.URL, Branch: branch,
		Commit: co.Commit, ManifestPath: conn.Path, Manifest: data,
	}
	// The files are read only from a manifest that checks out; an invalid
	// one is recorded alone (checkFetched fails it again from the record).
	files := map[string][]byte{}
	if m, err := decodeFetched(f); err == nil && len(manifest.Validate(m, manifest.ValidateOptions{RepositoryBacked: true})) == 0 {
		for _, p := range repositoryPaths(m) {
			b, err := co.ReadFile(p)
			if err != nil {
				return store.DeploymentFetch{}, buildFailure("files.path", err)
			}
			files[p] = b
		}
	}
	return r.p.Store.RecordDeploymentFetch(ctx, r.d.TeamID, f, files)
}

// buildFailure turns a coded checkout or read error into a deployment
// failure; an uncoded one (I/O) stays retryable.
func buildFailure(field string, err error) error {
	if code := build.ErrorCode(err); code != "" {
		return fail(code, "%s: %s", field, detail(err))
	}
	return err
}

func decodeFetched(f store.DeploymentFetch) (*manifest.Manifest, error) {
	format := "toml"
	if strings.EqualFold(path.Ext(f.ManifestPath), ".json") {
		format = "json"
	}
	return manifest.Decode(f.Manifest, format)
}

// checkFetched decodes and validates the fetched file: it must be valid
// for a repository-backed application and name the application. Its own
// spec.manifest is ignored (the saved connection decides where manifests
// come from), with a warning when it differs.
func (r *run) checkFetched(ctx context.Context, f store.DeploymentFetch, saved *manifest.Manifest) (*manifest.Manifest, error) {
	m, err := decodeFetched(f)
	if err != nil {
		return nil, fail(CodeManifestInvalid, "%s at %s: %v", f.ManifestPath, f.Commit, err)
	}
	if errs := manifest.Validate(m, manifest.ValidateOptions{RepositoryBacked: true}); len(errs) > 0 {
		return nil, fail(CodeManifestInvalid, "%s at %s: %s", f.ManifestPath, f.Commit, errs.Error())
	}
	if m.Metadata.Name != r.app.Name {
		return nil, fail(CodeManifestNameMismatch, "metadata.name: %s at %s names %q, but the application is %q",
			f.ManifestPath, f.Commit, m.Metadata.Name, r.app.Name)
	}
	if m.Spec.Manifest != nil && !sameConnection(m.Spec.Manifest, saved.Spec.Manifest) {
		r.event(ctx, CodeManifestConnectionIgnored, map[string]any{
			"field":   "spec.manifest",
			"message": "the fetched manifest's spec.manifest differs from the saved connection and is ignored",
		})
	}
	return m, nil
}

func sameConnection(a, b *manifest.ManifestSource) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// repositoryPaths lists the distinct repository paths the manifest's
// services mount as files.
func repositoryPaths(m *manifest.Manifest) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range m.Spec.Services {
		for _, f := range s.Files {
			if f.Path != "" && !seen[f.Path] {
				seen[f.Path] = true
				out = append(out, f.Path)
			}
		}
	}
	return out
}

// sourceFetch returns the repository record that applies to the
// deployment: its own, or for restores, rollbacks and promotions the one of
// the deployment it came from (they reuse its bytes). ErrNotFound when the
// deployment never read a repository.
func (r *run) sourceFetch(ctx context.Context) (store.DeploymentFetch, error) {
	if r.fetched != nil {
		return *r.fetched, nil
	}
	d := r.d
	for range 32 { // restore chains are short; the bound guards against a cycle
		f, err := r.p.Store.GetDeploymentFetch(ctx, d.TeamID, d.ID)
		if !errors.Is(err, store.ErrNotFound) {
			if err == nil && d.ID == r.d.ID {
				r.fetched = &f
			}
			return f, err
		}
		from := d.RestoredFrom
		if from == "" {
			from = d.PromotedFrom
		}
		if from == "" {
			break
		}
		if d, err = r.p.Store.GetDeployment(ctx, d.TeamID, from); err != nil {
			return store.DeploymentFetch{}, err
		}
	}
	return store.DeploymentFetch{}, store.ErrNotFound
}

// repositoryFiles returns the `path` files recorded with the deployment
// (or the one it restores or promotes); nil when it read no repository.
func (r *run) repositoryFiles(ctx context.Context) (map[string][]byte, error) {
	f, err := r.sourceFetch(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.p.Store.DeploymentFiles(ctx, r.d.TeamID, f.DeploymentID)
}

// selfRepository resolves `repository = "self"`: the manifest repository
// at exactly the commit the deployment fetched.
func (r *run) selfRepository(ctx context.Context, service string) (*manifest.Repository, error) {
	f, err := r.sourceFetch(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fail("source_unsupported", "service %s: repository = \"self\" needs a repository-backed application", service)
	}
	if err != nil {
		return nil, err
	}
	return &manifest.Repository{URL: f.RepositoryURL, Commit: f.Commit}, nil
}

// adoptFetchedManifest makes a fetched manifest that differs from the one
// last read the saved manifest (a new revision authored by "repository"),
// once the deployment prepared: what the repository holds is what the
// application is, and hand edits are replaced by the next change there.
func (r *run) adoptFetchedManifest(ctx context.Context) error {
	// A preview deploys its own branch, which says nothing about what the
	// application is.
	if r.d.Origin != store.OriginBuild || r.env.Kind == store.KindPreview {
		return nil
	}
	f, err := r.p.Store.GetDeploymentFetch(ctx, r.d.TeamID, r.d.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	state, err := r.p.Store.GetRepositoryState(ctx, r.d.TeamID, r.app.ID)
	if err != nil {
		return err
	}
	if state.LastReadManifest != nil && jsonEqual(state.LastReadManifest, r.d.CapturedManifest) {
		return nil
	}
	format := "toml"
	if strings.EqualFold(path.Ext(f.ManifestPath), ".json") {
		format = "json"
	}
	return r.p.Store.WithTx(ctx, func(tx *store.Store) error {
		rev, err := tx.CreateManifestRevision(ctx, r.d.TeamID, r.app.ID, store.RevisionParams{
			Manifest: r.d.CapturedManifest, Source: string(f.Manifest), SourceFormat: format, Author: AuthorRepository,
		})
		if err != nil {
			return fmt.Errorf("adopt fetched manifest: %w", err)
		}
		if err := tx.RecordLastRead(ctx, r.d.TeamID, r.app.ID, r.d.CapturedManifest, f.Commit); err != nil {
			return err
		}
		_, err = tx.RecordEvent(ctx, r.d.TeamID, store.EventParams{
			Actor: AuthorRepository, Verb: "manifest.adopted", ObjectType: "application", ObjectID: r.app.ID,
			Details: map[string]any{"revision": rev.Revision, "commit": f.Commit, "deployment_id": r.d.ID},
		})
		return err
	})
}

// jsonEqual compares two JSON documents by value (Postgres jsonb does not
// keep key order or spacing).
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}
