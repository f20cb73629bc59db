package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// SourceRequest is one git build source of a deployment, as the manifest
// states it (spec.services.source with type = "git"), plus who builds it.
type SourceRequest struct {
	URL    string
	Branch string
	Commit string
	Auth   Auth

	Dockerfile string
	Context    string
	Args       map[string]string
	Target     string

	Owner  Owner
	Labels map[string]string
	Tag    string
	// Timeout bounds the whole preparation, checkout and build
	// (prepare_timeout_seconds); DefaultPrepareTimeout when zero.
	Timeout time.Duration
	Output  io.Writer
	// Reuse returns an existing image of the same source identity without
	// checking anything out (normal reconciliation). An explicit deploy
	// leaves it false and builds again, which Docker's cache makes cheap.
	Reuse bool
	// Dir is where the temporary checkout goes; the system temp directory
	// when empty. The checkout is removed before returning.
	Dir string
	// Snapshot is the local snapshot bundle holding Commit, if any
	// (CheckoutRequest.Snapshot).
	Snapshot []byte
}

// PrepareSource resolves a git source's commit (the pinned one or the branch
// head, listed once), reuses an image built from the same identity when
// asked to, and otherwise checks the commit out and builds it. Checkout
// warnings (submodules, LFS) are written to Output.
func (b *Builder) PrepareSource(ctx context.Context, req SourceRequest) (*BuildResult, error) {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultPrepareTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := b.prepare(ctx, req, timeout)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && ErrorCode(err) != CodeBuildTimeout {
		return nil, timeoutError(ctx, timeout, "checking out the source")
	}
	return res, err
}

func (b *Builder) prepare(ctx context.Context, req SourceRequest, timeout time.Duration) (*BuildResult, error) {
	if req.Reuse {
		commit, err := ResolveCommit(ctx, req.URL, req.Branch, req.Commit, req.Auth)
		if err != nil {
			return nil, err
		}
		identity := SourceIdentity(Source{URL: req.URL, Commit: commit, Dockerfile: req.Dockerfile, Context: req.Context, Args: req.Args, Target: req.Target})
		id, err := b.FindImage(ctx, req.Owner.Team, identity)
		if err != nil {
			return nil, err
		}
		if id != "" {
			return &BuildResult{ImageID: id, Identity: identity, Commit: commit, Reused: true}, nil
		}
	}
	// Checking out the branch (rather than the commit just listed) keeps the
	// fetch shallow on servers that refuse unadvertised commits; the build
	// records whichever head it got.
	co, err := CheckoutRepository(ctx, CheckoutRequest{URL: req.URL, Branch: req.Branch, Commit: req.Commit, Auth: req.Auth, Dir: req.Dir, Snapshot: req.Snapshot})
	if err != nil {
		return nil, err
	}
	defer co.Remove()
	if req.Output != nil {
		for _, w := range co.Warnings {
			fmt.Fprintf(req.Output, "warning: %s (%s)\n", w.Message, w.Code)
		}
	}
	return b.Build(ctx, BuildRequest{
		Checkout:   co,
		Dockerfile: req.Dockerfile,
		Context:    req.Context,
		Args:       req.Args,
		Target:     req.Target,
		Owner:      req.Owner,
		Labels:     req.Labels,
		Tag:        req.Tag,
		Timeout:    timeout,
		Output:     req.Output,
		Outbound:   req.Auth.Outbound,
	})
}
