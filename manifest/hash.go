package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
)

// Hash envelope versions. A change to the canonical form bumps them, so
// stored hashes are never compared across forms by accident.
const (
	SpecHashVersion    = "slipway-spec-hash/v1"
	ServiceHashVersion = "slipway-service-hash/v1"
)

// specEnvelope is what the spec hash covers: the canonical spec and the
// SHA-256 of every repository file it mounts, keyed by repository path.
type specEnvelope struct {
	Version string            `json:"version"`
	Spec    Spec              `json:"spec"`
	Files   map[string]string `json:"files"`
}

type serviceEnvelope struct {
	Version string            `json:"version"`
	Service Service           `json:"service"`
	Files   map[string]string `json:"files"`
}

// SpecHash is the hex SHA-256 of the versioned canonical JSON envelope
// {"version":"slipway-spec-hash/v1","spec":...,"files":{path: sha256}}.
// Reformatting or reordering a manifest never changes it; neither do
// spec.manifest connection settings. repoFiles holds the contents of the
// repository files the manifest mounts (files with a path), by that path;
// every one of them must be present.
func SpecHash(m *Manifest, repoFiles map[string][]byte) (string, error) {
	c := canonicalize(m)
	files, err := repositoryFileDigests(c.Spec.Services, repoFiles)
	if err != nil {
		return "", err
	}
	return hashEnvelope(specEnvelope{Version: SpecHashVersion, Spec: c.Spec, Files: files})
}

// ServiceHash is the hash of one service's canonical settings and the
// repository files it mounts, for the runtime's per-service
// dev.slipway.spec-hash label: a change elsewhere in the manifest leaves it
// as it was, so only the services that changed roll out.
func ServiceHash(m *Manifest, service string, repoFiles map[string][]byte) (string, error) {
	c := canonicalize(m)
	for _, svc := range c.Spec.Services {
		if svc.Name != service {
			continue
		}
		files, err := repositoryFileDigests([]Service{svc}, repoFiles)
		if err != nil {
			return "", err
		}
		return hashEnvelope(serviceEnvelope{Version: ServiceHashVersion, Service: svc, Files: files})
	}
	return "", fmt.Errorf("service hash: no service named %q", service)
}

func repositoryFileDigests(services []Service, repoFiles map[string][]byte) (map[string]string, error) {
	digests := map[string]string{}
	var missing []string
	for _, svc := range services {
		for _, f := range svc.Files {
			if f.Path == "" {
				continue
			}
			data, ok := repoFiles[f.Path]
			if !ok {
				missing = append(missing, f.Path)
				continue
			}
			sum := sha256.Sum256(data)
			digests[f.Path] = hex.EncodeToString(sum[:])
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("spec hash: contents of repository files %q were not provided", missing)
	}
	return digests, nil
}

func hashEnvelope(env any) (string, error) {
	data, err := marshalCanonical(env)
	if err != nil {
		return "", fmt.Errorf("spec hash: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
