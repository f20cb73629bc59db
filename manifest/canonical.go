package manifest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// canonicalize returns the normalized copy of m that the spec hash covers:
// defaults applied, so that writing a default and omitting it are the same;
// order-insensitive lists sorted by their identity; empty optional blocks
// dropped; and spec.manifest removed, since connection settings never change
// what runs. Lists whose order means something (command, arguments, jobs,
// health-check commands) keep it. Maps need nothing: encoding/json writes
// their keys sorted.
func canonicalize(m *Manifest) *Manifest {
	c := cloneManifest(m)
	applyCanonicalDefaults(c)
	s := &c.Spec
	s.Manifest = nil
	slices.SortStableFunc(s.Services, func(a, b Service) int { return cmp.Compare(a.Name, b.Name) })
	for i := range s.Services {
		canonicalService(&s.Services[i])
	}
	slices.SortStableFunc(s.Volumes, func(a, b Volume) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortStableFunc(s.Routes, func(a, b Route) int {
		return cmp.Or(cmp.Compare(a.Hostname, b.Hostname), cmp.Compare(a.Name, b.Name))
	})
	for i := range s.Jobs {
		sortSecretMounts(s.Jobs[i].Secrets)
	}
	slices.SortStableFunc(s.Secrets, func(a, b SecretDeclaration) int { return cmp.Compare(a.Name, b.Name) })
	for i := range s.Exports {
		slices.Sort(s.Exports[i].Applications)
	}
	slices.SortStableFunc(s.Exports, func(a, b Export) int { return cmp.Compare(a.Service, b.Service) })
	slices.SortStableFunc(s.Imports, func(a, b Import) int {
		return cmp.Or(cmp.Compare(a.Application, b.Application), cmp.Compare(a.Service, b.Service), cmp.Compare(a.Environment, b.Environment))
	})
	return c
}

func canonicalService(svc *Service) {
	slices.SortStableFunc(svc.Mounts, func(a, b Mount) int { return cmp.Compare(a.Target, b.Target) })
	slices.SortStableFunc(svc.Files, func(a, b File) int { return cmp.Compare(a.Target, b.Target) })
	sortSecretMounts(svc.Secrets)
	slices.Sort(svc.DependsOn)
	if r := svc.Resources; r != nil && r.CPUMillis == nil && r.MemoryBytes == nil {
		svc.Resources = nil
	}
	if r := svc.Rollout; r != nil && r.Order == "" && r.MonitorSeconds == nil {
		svc.Rollout = nil
	}
}

func sortSecretMounts(ms []SecretMount) {
	slices.SortStableFunc(ms, func(a, b SecretMount) int {
		return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(a.Name, b.Name))
	})
}

// CanonicalJSON is the canonical form of the whole manifest as JSON: the
// document the spec hash is computed from, plus its header and metadata, and
// without spec.manifest. Decoding it gives a manifest with the same hash.
func CanonicalJSON(m *Manifest) ([]byte, error) {
	c := canonicalize(m)
	return marshalCanonical(c)
}

// marshalCanonical writes v as compact JSON without HTML escaping, so the
// bytes are exactly what a reader of the envelope expects.
func marshalCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
