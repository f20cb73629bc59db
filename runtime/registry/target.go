package registry

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/docker/docker/api/types/image"
	dockerregistry "github.com/docker/docker/api/types/registry"
)

// Target is where built images go so every node can pull them.
type Target struct {
	// Host is the registry as the nodes' engines reach it:
	// "127.0.0.1:5000" for the embedded one (through the relay), or an
	// external registry's host[:port]. Empty: no registry (one node).
	Host string
	// Prefix is the repository path under Host ("slipway" for the embedded
	// registry; an external URL's path).
	Prefix string
	// User and Password authenticate pushes and pulls.
	User, Password string
	// APIURL is where this process reaches the registry's HTTP API, for
	// Prune ("http://127.0.0.1:5000", "http://slipway-registry:5000" from
	// a container on the overlay, "https://host" for an external one).
	APIURL string
}

// Enabled reports whether built images are pushed.
func (t Target) Enabled() bool { return t.Host != "" }

var repoUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// Repository is the repository an environment's service image goes to:
// <host>/<prefix>/<team>/<app>-<service>, lowercased, with anything
// a repository name cannot hold replaced by "-".
func (t Target) Repository(team, app, service string) string {
	return t.TeamPrefix(team) + clean(app) + "-" + clean(service)
}

// TeamPrefix is what every repository of team's images starts with:
// <host>/<prefix>/<team>/.
func (t Target) TeamPrefix(team string) string {
	parts := []string{t.Host}
	if t.Prefix != "" {
		parts = append(parts, strings.Trim(t.Prefix, "/"))
	}
	return strings.Join(append(parts, clean(team)), "/") + "/"
}

func clean(s string) string {
	return strings.Trim(repoUnsafe.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// Auth is the X-Registry-Auth header value (Swarm's EncodedRegistryAuth)
// for the target's account.
func (t Target) Auth() string {
	return EncodeAuth(t.Host, t.User, t.Password)
}

// EncodeAuth is the X-Registry-Auth header value of an account on server.
func EncodeAuth(server, user, password string) string {
	b, _ := json.Marshal(dockerregistry.AuthConfig{Username: user, Password: password, ServerAddress: server})
	return base64.URLEncoding.EncodeToString(b)
}

// Engine is the part of the Docker client a push uses.
type Engine interface {
	ImageTag(ctx context.Context, source, target string) error
	ImagePush(ctx context.Context, ref string, options image.PushOptions) (io.ReadCloser, error)
}

// CodePushFailed is the code of a push the registry refused or that broke.
const CodePushFailed = "image_push_failed"

// Error is a push failure.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// ErrorCode lets the pipeline turn it into a deployment failure.
func (e *Error) ErrorCode() string { return e.Code }

// Push tags the local image imageID into repo and pushes it, returning the
// digest-pinned reference (repo@sha256:...) the service specs name. The
// tag is the image ID's first 12 hex digits, so pushing the same image
// again changes nothing.
func (t Target) Push(ctx context.Context, engine Engine, imageID, repo string) (string, error) {
	id := strings.TrimPrefix(imageID, "sha256:")
	if len(id) < 12 {
		return "", fmt.Errorf("push: %q is not an image ID", imageID)
	}
	ref := repo + ":id-" + id[:12]
	if err := engine.ImageTag(ctx, imageID, ref); err != nil {
		return "", fmt.Errorf("tag %s as %s: %w", imageID, ref, err)
	}
	rc, err := engine.ImagePush(ctx, ref, image.PushOptions{RegistryAuth: t.Auth()})
	if err != nil {
		return "", &Error{Code: CodePushFailed, Message: fmt.Sprintf("push %s: %v", ref, err)}
	}
	defer rc.Close()
	digest, err := pushDigest(rc)
	if err != nil {
		return "", &Error{Code: CodePushFailed, Message: fmt.Sprintf("push %s: %v", ref, err)}
	}
	return repo + "@" + digest, nil
}

// pushDigest reads a push's JSON stream: an error message fails it, the
// aux message carries the manifest digest.
func pushDigest(r io.Reader) (string, error) {
	dec := json.NewDecoder(r)
	var digest string
	for {
		var m struct {
			Error       string `json:"error"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
			Aux *struct {
				Digest string `json:"Digest"`
			} `json:"aux"`
		}
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("read push output: %w", err)
		}
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			return "", errors.New(m.ErrorDetail.Message)
		}
		if m.Error != "" {
			return "", errors.New(m.Error)
		}
		if m.Aux != nil && m.Aux.Digest != "" {
			digest = m.Aux.Digest
		}
	}
	if !strings.HasPrefix(digest, "sha256:") {
		return "", errors.New("the registry reported no digest")
	}
	return digest, nil
}
