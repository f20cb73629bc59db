package image

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/outbound"
)

// CodeUnavailable is the error code of an image that is neither present
// locally nor pullable.
const CodeUnavailable = "image_unavailable"

// Engine is the subset of the Docker client the resolver calls.
type Engine interface {
	ImageInspect(ctx context.Context, ref string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImagePull(ctx context.Context, ref string, opts image.PullOptions) (io.ReadCloser, error)
	DistributionInspect(ctx context.Context, ref, encodedRegistryAuth string) (registry.DistributionInspect, error)
}

// Access is who asks for an image: the team's own credentials for its
// registry, and whether the registry must confirm them.
type Access struct {
	// Auth is the X-Registry-Auth value of the team's account on the
	// image's registry ("" pulls anonymously).
	Auth string
	// Verify makes a copy already on this node not enough: the registry
	// must let Auth pull the image. Set it when images from that registry
	// may be private (some team holds credentials for it), so an image
	// another team's credentials brought to the node is not run by a team
	// that cannot pull it itself.
	Verify bool
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

// Error is a resolution failure with its code: image_unavailable, or
// destination_not_allowed when the registry is on a refused address.
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
	// outbound checks the registry a pull would contact (CheckPull).
	outbound *outbound.Policy
}

// WithOutbound sets the policy that pulls' registries are checked
// against; without one, the strict policy.
func (r *Resolver) WithOutbound(p *outbound.Policy) *Resolver {
	r.outbound = p
	return r
}

// NewResolver returns a resolver. With pull false, only local images
// resolve (a machine without a registry, or builds-only installations).
func NewResolver(engine Engine, pull bool) *Resolver {
	return &Resolver{engine: engine, pull: pull}
}

// Resolve returns the image ref names, pulling it first (with a's
// credentials) when it is not present. Docker errors other than "not
// found" are returned as they are (the caller retries them); a missing
// image, or one a's registry refuses, is an *Error with image_unavailable.
//
// ref's registry host is the tenant's choice and the engine connects to it
// for Slipway (the pull here and DistributionInspect in verify), so the
// outbound policy checks that host before either call (CheckPull).
func (r *Resolver) Resolve(ctx context.Context, ref string, a Access) (Resolved, error) {
	info, err := r.engine.ImageInspect(ctx, ref)
	pulled := false
	if cerrdefs.IsNotFound(err) && r.pull {
		if cerr := CheckPull(ctx, r.outbound, ref); cerr != nil {
			return Resolved{}, cerr
		}
		if perr := r.pullImage(ctx, ref, a.Auth); perr != nil {
			return Resolved{}, &Error{Code: CodeUnavailable, Reference: ref, Message: "not present on this node and " + pullFailure(perr)}
		}
		pulled = true
		info, err = r.engine.ImageInspect(ctx, ref)
	}
	if cerrdefs.IsNotFound(err) {
		return Resolved{}, &Error{Code: CodeUnavailable, Reference: ref, Message: "not present on this node; push it to a registry the node can pull from, or build it here"}
	}
	if err != nil {
		return Resolved{}, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	res := Resolved{Reference: ref, ID: info.ID}
	d := repoDigest(ref, info.RepoDigests)
	if d == "" && len(info.RepoDigests) > 0 && namedByID(ref, info) {
		// A pulled image named by its ID would run whatever registry it
		// came from, with nobody's access checked.
		return Resolved{}, &Error{Code: CodeUnavailable, Reference: ref, Message: "this image came from a registry: name it by its repository (" + info.RepoDigests[0] + "), not by its ID"}
	}
	if d != "" {
		res.Digest = d
		if !strings.Contains(ref, "@") {
			res.Reference = ref + "@" + d
		}
		if a.Verify && !pulled {
			if cerr := CheckPull(ctx, r.outbound, ref); cerr != nil {
				return Resolved{}, cerr
			}
			if err := r.verify(ctx, res.Reference, a.Auth); err != nil {
				return Resolved{}, err
			}
		}
	}
	return res, nil
}

// verify asks the registry whether auth may pull ref (a digest-pinned
// reference of an image on this node): the node's copy may have come
// with another team's credentials.
func (r *Resolver) verify(ctx context.Context, ref, auth string) error {
	_, err := r.engine.DistributionInspect(ctx, ref, auth)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The daemon's text is not passed on (it may carry what the registry
	// answered): only what kind of refusal it was.
	why := "the registry could not be reached to check this team's access to it"
	if cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err) || cerrdefs.IsNotFound(err) || refusal(err.Error()) {
		why = "the registry does not let this team pull it (set the team's credentials for the registry)"
	}
	return &Error{Code: CodeUnavailable, Reference: ref, Message: why}
}

// refusal tells a registry's refusal from a failure to reach it, in the
// daemon's words (it reports both as a plain error).
func refusal(msg string) bool {
	msg = strings.ToLower(msg)
	for _, s := range []string{"no basic auth credentials", "unauthorized", "denied", "authentication required", "manifest unknown", "not found"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// namedByID reports whether Docker found the image by (a prefix of) its ID
// rather than by one of its tags or digests.
func namedByID(ref string, info image.InspectResponse) bool {
	id := strings.TrimPrefix(info.ID, "sha256:")
	r := strings.TrimPrefix(ref, "sha256:")
	return len(r) >= 12 && strings.HasPrefix(id, r) && !slices.Contains(info.RepoTags, ref)
}

func (r *Resolver) pullImage(ctx context.Context, ref, auth string) error {
	rc, err := r.engine.ImagePull(ctx, ref, image.PullOptions{RegistryAuth: auth})
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
