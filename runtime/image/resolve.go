package image

import (
	"context"
	"fmt"
	"io"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// CodeUnavailable is the error code of an image that is neither present
// locally nor pullable.
const CodeUnavailable = "image_unavailable"

// Engine is the subset of the Docker client the resolver calls.
type Engine interface {
	ImageInspect(ctx context.Context, ref string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImagePull(ctx context.Context, ref string, opts image.PullOptions) (io.ReadCloser, error)
}

// Resolved is the image a service runs.
type Resolved struct {
	// Reference is what the service spec names: the manifest's reference,
	// pinned to its repository digest when the image came from a registry.
	Reference string `json:"reference"`
	// ID is the content-addressed local image ID.
	ID string `json:"id"`
	// Digest is the repository digest, when the image has one.
	Digest string `json:"digest,omitempty"`
}

// Error is a resolution failure with its code.
type Error struct {
	Code      string
	Reference string
	Message   string
}

func (e *Error) Error() string { return e.Code + ": " + e.Detail() }

// Detail is the error without its code, for a record that keeps the code
// apart.
func (e *Error) Detail() string {
	return fmt.Sprintf("image %s: %s", e.Reference, e.Message)
}

// Resolver finds images locally and pulls the missing ones.
type Resolver struct {
	engine Engine
	// Pull says whether a missing image may be pulled.
	pull bool
}

// NewResolver returns a resolver. With pull false, only local images
// resolve (a machine without a registry, or builds-only installations).
func NewResolver(engine Engine, pull bool) *Resolver {
	return &Resolver{engine: engine, pull: pull}
}

// Resolve returns the image ref names, pulling it first when it is not
// present. Docker errors other than "not found" are returned as they are
// (the caller retries them); a missing image is an *Error with
// image_unavailable.
func (r *Resolver) Resolve(ctx context.Context, ref string) (Resolved, error) {
	info, err := r.engine.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) && r.pull {
		if perr := r.pullImage(ctx, ref); perr != nil {
			return Resolved{}, &Error{Code: CodeUnavailable, Reference: ref, Message: "not present on this node and the pull failed: " + perr.Error()}
		}
		info, err = r.engine.ImageInspect(ctx, ref)
	}
	if cerrdefs.IsNotFound(err) {
		return Resolved{}, &Error{Code: CodeUnavailable, Reference: ref, Message: "not present on this node; push it to a registry the node can pull from, or build it here"}
	}
	if err != nil {
		return Resolved{}, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	res := Resolved{Reference: ref, ID: info.ID}
	if d := repoDigest(ref, info.RepoDigests); d != "" {
		res.Digest = d
		if !strings.Contains(ref, "@") {
			res.Reference = ref + "@" + d
		}
	}
	return res, nil
}

func (r *Resolver) pullImage(ctx context.Context, ref string) error {
	rc, err := r.engine.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}

// repoDigest returns the sha256 digest of ref's repository among digests
// ("repo@sha256:..."), or "".
func repoDigest(ref string, digests []string) string {
	repo := ref
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	for _, d := range digests {
		if name, digest, ok := strings.Cut(d, "@"); ok && (name == repo || strings.HasSuffix(name, "/"+repo)) {
			return digest
		}
	}
	return ""
}
