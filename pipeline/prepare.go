package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/image"
)

// prepare resolves every service's image once; retries reuse the result.
func (r *run) prepare(ctx context.Context) error {
	if r.progress.Done("prepare") {
		return nil
	}
	if err := r.start(ctx, "prepare"); err != nil {
		return err
	}
	if err := r.checkVolumeNodes(ctx); err != nil {
		return err
	}
	detail := map[string]string{}
	var buildLog boundedBuffer
	if buildsImages(r.rendered) {
		release, err := r.claimBuild(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	for i, svc := range r.rendered.Spec.Services {
		switch svc.Source.Type {
		case manifest.SourceImage:
			res, err := r.resolveImage(ctx, svc.Source.Image)
			var ie *image.Error
			if errors.As(err, &ie) {
				return fail(ie.Code, "spec.services[%d].source.image: service %s: %s", i, svc.Name, ie.Detail())
			}
			if err != nil {
				return err
			}
			// A registry image runs by digest; a local one by its ID, so
			// moving its tag later cannot change what this deployment (or a
			// promotion of it) runs. With a registry, a local one is pushed
			// there so every node can pull it.
			detail[svc.Name] = res.Reference
			if res.Digest == "" {
				if detail[svc.Name], err = r.publish(ctx, svc.Name, res.ID); err != nil {
					return err
				}
			}
			detail["id:"+svc.Name] = res.ID
		case manifest.SourceGit:
			res, err := r.buildSource(ctx, i, svc, &buildLog)
			if err != nil {
				r.progress.Find("prepare").Output = buildLog.String()
				return err
			}
			if detail[svc.Name], err = r.publish(ctx, svc.Name, res.ImageID); err != nil {
				return err
			}
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

// buildsImages says whether preparing m builds any image.
func buildsImages(m *manifest.Manifest) bool {
	for _, s := range m.Spec.Services {
		if s.Source.Type == manifest.SourceGit {
			return true
		}
	}
	return false
}

// buildSource checks out and builds one git source, the i-th service's.
func (r *run) buildSource(ctx context.Context, i int, svc manifest.Service, out *boundedBuffer) (*build.BuildResult, error) {
	if r.p.Builds == nil {
		return nil, fail("source_unsupported", "service %s: this worker cannot build git sources", svc.Name)
	}
	repo := svc.Source.Repository
	var snapshot []byte
	repoPath := fmt.Sprintf("spec.services[%d].source.repository", i)
	if repo == nil || repo.Self {
		repoPath = "spec.manifest.repository"
		// "self" is the manifest repository at the fetched commit (fetch.go).
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
		Timeout:  r.p.prepareTimeout(),
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
			return nil, fail(code, "%s: service %s: %s", sourceFieldPath(repoPath, fmt.Sprintf("spec.services[%d].source.build", i), err), svc.Name, detail(err))
		}
		return nil, err
	}
	return res, nil
}

// sourceFieldPath is the manifest path of the field a build error names:
// the repository's url, branch or commit, or the build's dockerfile,
// context, target or args.
func sourceFieldPath(repoPath, buildPath string, err error) string {
	var be *build.Error
	if !errors.As(err, &be) || be.Field == "" {
		return strings.TrimSuffix(repoPath, ".repository")
	}
	switch be.Field {
	case "url", "branch", "commit", "auth":
		return repoPath + "." + be.Field
	}
	return buildPath + "." + be.Field
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

// repositoryAuth is the run's credentials for url (anonymous without a
// provider).
func (r *run) repositoryAuth(ctx context.Context, repositoryURL string) (build.Auth, error) {
	auth := build.Auth{}
	if r.p.Credentials != nil {
		var err error
		if auth, err = r.p.Credentials.RepositoryAuth(ctx, r.d.TeamID, r.app.ID, repositoryURL); err != nil {
			return build.Auth{}, err
		}
	}
	auth.AllowFileURLs = r.p.AllowFileURLs
	auth.Outbound = r.p.Outbound
	return auth, nil
}
