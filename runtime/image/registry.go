package image

import (
	"context"
	"errors"
	"net"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"

	"github.com/slipwayhq/slipway/outbound"
)

// dockerHub is where the daemon pulls docker.io references from.
const dockerHub = "registry-1.docker.io"

// RegistryHost is the host (without port) the daemon contacts to pull
// ref: the reference's registry, Docker Hub's for a bare name.
func RegistryHost(ref string) (string, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", err
	}
	domain := reference.Domain(named)
	if domain == "docker.io" {
		return dockerHub, nil
	}
	if host, _, err := net.SplitHostPort(domain); err == nil {
		return strings.Trim(host, "[]"), nil
	}
	return strings.Trim(domain, "[]"), nil
}

// CheckPull refuses a pull of ref when its registry host resolves to an
// address p refuses. The daemon makes the connection and resolves the name
// again itself, so this is a look-ahead: it stops a manifest naming a
// registry on a private address, not a name that changes its answer in
// between (docs/security.md says so).
func CheckPull(ctx context.Context, p *outbound.Policy, ref string) error {
	host, err := RegistryHost(ref)
	if err != nil {
		return &Error{Code: CodeUnavailable, Reference: ref, Message: "not a valid image reference"}
	}
	if err := outbound.OrStrict(p).CheckHost(ctx, host); err != nil {
		var refusal *outbound.Error
		if errors.As(err, &refusal) {
			return &Error{Code: outbound.Code, Reference: ref, Message: "registry " + refusal.Error()}
		}
		return &Error{Code: CodeUnavailable, Reference: ref, Message: "registry host " + host + " does not resolve"}
	}
	return nil
}

// pullFailure says what kind of failure a pull was, without the daemon's
// text, which can carry what the registry (or whatever answered in its
// place) said, or whether an internal address answered at all.
func pullFailure(err error) string {
	switch {
	case cerrdefs.IsNotFound(err):
		return "the registry has no such image or tag"
	case cerrdefs.IsUnauthorized(err), cerrdefs.IsPermissionDenied(err):
		return "the registry refused access"
	case errors.Is(err, context.DeadlineExceeded), cerrdefs.IsDeadlineExceeded(err):
		return "the pull timed out"
	}
	return "the pull failed (the registry's answer is not shown; the daemon's log has it)"
}
