package secrets

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/distribution/reference"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/store"
)

// Error codes of registry credentials.
const (
	CodeRegistryHostInvalid       = "registry_host_invalid"
	CodeRegistryUsernameInvalid   = "registry_username_invalid"
	CodeRegistryPasswordEmpty     = "registry_password_empty"
	CodeRegistryPasswordTooLarge  = "registry_password_too_large"
	CodeRegistryCredentialMissing = "registry_credential_not_found"
)

// MaxRegistryPasswordSize bounds a registry password or token (a cloud
// service account's JSON key is a few KiB).
const MaxRegistryPasswordSize = 64 * 1024

// dockerHub is the host Docker Hub's images and credentials are filed
// under, whichever of its names was given.
const dockerHub = "docker.io"

var dockerHubAliases = map[string]bool{
	"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true, "registry.hub.docker.com": true,
}

// registryHostRE is a host name or IPv4 address, with an optional port:
// what the registry_credentials table accepts.
var registryHostRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$`)

// NormalizeRegistryHost reads a registry as people write it
// ("ghcr.io", "https://registry.example.com:5000/", "index.docker.io")
// into the host[:port] credentials are filed under: lowercase, no scheme
// or path, Docker Hub's names as "docker.io".
func NormalizeRegistryHost(s string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(s))
	for _, scheme := range []string{"https://", "http://"} {
		h = strings.TrimPrefix(h, scheme)
	}
	h, _, _ = strings.Cut(h, "/")
	if dockerHubAliases[h] {
		return dockerHub, nil
	}
	if !registryHostRE.MatchString(h) || len(h) > 253 {
		return "", refuse(CodeRegistryHostInvalid, "host", nil,
			"registry host %q must be a host name or IPv4 address with an optional port, such as ghcr.io or registry.example.com:5000", s)
	}
	return h, nil
}

// ImageRegistryHost is the normalized registry host of an image reference
// ("docker.io" for a bare name such as postgres:16).
func ImageRegistryHost(ref string) (string, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", ref, err)
	}
	return NormalizeRegistryHost(reference.Domain(named))
}

// RegistryLogin is a team's account on one registry, opened: only the
// worker holds one, to pull that team's images and hand Swarm the same
// credentials.
type RegistryLogin struct {
	Host, Username, Password string
}

// SetRegistryCredential stores the team's account on host (replacing the
// one it had there), the password sealed. actor is recorded as its author.
func (s *Service) SetRegistryCredential(ctx context.Context, teamID, host, username string, password []byte, actor string) (store.RegistryCredential, error) {
	h, err := NormalizeRegistryHost(host)
	if err != nil {
		return store.RegistryCredential{}, err
	}
	username = strings.TrimSpace(username)
	switch {
	case username == "" || len(username) > 255 || strings.ContainsAny(username, "\r\n"):
		return store.RegistryCredential{}, refuse(CodeRegistryUsernameInvalid, "username", nil,
			"registry %s: the username must be 1 to 255 characters on one line", h)
	case len(password) == 0:
		return store.RegistryCredential{}, refuse(CodeRegistryPasswordEmpty, "password", nil,
			"registry %s: the password (or token) is empty", h)
	case len(password) > MaxRegistryPasswordSize:
		return store.RegistryCredential{}, refuse(CodeRegistryPasswordTooLarge, "password", nil,
			"registry %s: the password is %d bytes; at most %d", h, len(password), MaxRegistryPasswordSize)
	}
	c, err := s.st.SetRegistryCredential(ctx, teamID, h, username, actor, func(r store.SealedRef) (store.Sealed, error) {
		return s.seal(password, r)
	})
	if err != nil {
		return store.RegistryCredential{}, fmt.Errorf("set registry credential for %s: %w", h, err)
	}
	return c, nil
}

// RegistryCredentials lists the team's registry accounts: hosts and
// usernames, never a password.
func (s *Service) RegistryCredentials(ctx context.Context, teamID string) ([]store.RegistryCredential, error) {
	return s.st.ListRegistryCredentials(ctx, teamID)
}

// DeleteRegistryCredential removes the team's account on host. Services
// already running keep the credentials Swarm was given with them until
// their next deployment.
func (s *Service) DeleteRegistryCredential(ctx context.Context, teamID, host string) error {
	h, err := NormalizeRegistryHost(host)
	if err != nil {
		return err
	}
	err = s.st.DeleteRegistryCredential(ctx, teamID, h)
	if errors.Is(err, store.ErrNotFound) {
		return refuse(CodeRegistryCredentialMissing, "host", nil, "the team has no credentials for registry %s", h)
	}
	return err
}

// RegistryLogin opens the team's account on the registry of image ref:
// ok is false when the team has none there (the image is pulled
// anonymously). Only the team's own accounts are ever looked at.
func (s *Service) RegistryLogin(ctx context.Context, teamID, ref string) (RegistryLogin, bool, error) {
	host, err := ImageRegistryHost(ref)
	if err != nil {
		// Not a reference a registry serves (the resolver says so).
		return RegistryLogin{}, false, nil
	}
	c, r, sealed, err := s.st.RegistryCredentialCiphertext(ctx, teamID, host)
	if errors.Is(err, store.ErrNotFound) {
		return RegistryLogin{}, false, nil
	}
	if err != nil {
		return RegistryLogin{}, false, err
	}
	pw, err := s.open(r, sealed)
	if err != nil {
		var ke *keyring.Error
		if errors.As(err, &ke) {
			return RegistryLogin{}, false, refuse(ke.Code, "", nil, "the team's credentials for registry %s: %s", host, ke.Message)
		}
		return RegistryLogin{}, false, err
	}
	return RegistryLogin{Host: host, Username: c.Username, Password: string(pw)}, true, nil
}
