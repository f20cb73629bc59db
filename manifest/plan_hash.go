package manifest

import (
	"fmt"
	"slices"
	"strings"
)

// HashTarget is an environment a plan hashes the new manifest for.
type HashTarget struct {
	Environment string
	// Context renders the manifest as a deployment there would
	// (PlanContext).
	Context RenderContext
	// Deployed is the rendered manifest running there, nil when nothing
	// is; DeployedSpecHash is the spec hash its deployment recorded.
	Deployed         *Manifest
	DeployedSpecHash string
}

// Service hash changes, as EnvironmentHash lists them.
const (
	HashAdded     = "added"
	HashChanged   = "changed"
	HashUnchanged = "unchanged"
	HashRemoved   = "removed"
	HashUnknown   = "unknown"
)

// EnvironmentHash is the spec hash a plan would deploy to one
// environment, with each service's hash beside what runs there.
type EnvironmentHash struct {
	Environment string `json:"environment"`
	// SpecHash is SpecHash of the manifest rendered for the environment;
	// "" when Unknown says why it cannot be known before deploying.
	SpecHash string `json:"spec_hash,omitempty"`
	// DeployedSpecHash is the hash of what runs there now, if anything.
	DeployedSpecHash string `json:"deployed_spec_hash,omitempty"`
	// Changed is true when SpecHash differs from DeployedSpecHash (or
	// nothing runs there yet).
	Changed  bool                `json:"changed"`
	Unknown  string              `json:"unknown,omitempty"`
	Services []ServiceHashChange `json:"services"`
}

// ServiceHashChange is one service's ServiceHash in a plan: the one the
// runtime's label will carry, and the one running.
type ServiceHashChange struct {
	Service          string `json:"service"`
	SpecHash         string `json:"spec_hash,omitempty"`
	DeployedSpecHash string `json:"deployed_spec_hash,omitempty"`
	// Change is added, changed, unchanged, removed or unknown: whether the
	// service rolls out.
	Change string `json:"change"`
}

// Why a plan cannot know a hash before deploying.
const (
	hashUnknownFiles   = "it mounts repository files, whose contents are read only when deploying"
	hashUnknownDeploy  = "it uses deployment.id or an unpinned git.sha, known only when deploying"
	hashUnknownRenders = "the manifest does not render for this environment: "
)

// PlanHashes is the spec hash, and each service's hash, that deploying m
// to each target would record, compared with what runs there.
func PlanHashes(m *Manifest, targets []HashTarget) []EnvironmentHash {
	out := make([]EnvironmentHash, 0, len(targets))
	for _, t := range targets {
		out = append(out, planHash(m, t))
	}
	return out
}

func planHash(m *Manifest, t HashTarget) EnvironmentHash {
	e := EnvironmentHash{Environment: t.Environment, DeployedSpecHash: t.DeployedSpecHash, Services: []ServiceHashChange{}}
	rendered, errs := Render(m, t.Context)
	if len(errs) > 0 {
		e.Unknown = hashUnknownRenders + errs[0].Error()
		return e
	}
	// Rendered again with other deploy-time values: what changes with
	// them is not known yet.
	other := t.Context
	other.DeploymentID += "-other"
	if other.GitSHA == PlanGitSHA {
		other.GitSHA = strings.Repeat("f", len(PlanGitSHA))
	}
	variant, _ := Render(m, other)
	e.SpecHash, e.Unknown = stableHash(func(r *Manifest) (string, error) { return SpecHash(r, nil) }, rendered, variant)
	e.Changed = e.SpecHash != "" && e.SpecHash != t.DeployedSpecHash
	for _, svc := range rendered.Spec.Services {
		c := ServiceHashChange{Service: svc.Name}
		c.SpecHash, _ = stableHash(func(r *Manifest) (string, error) { return ServiceHash(r, svc.Name, nil) }, rendered, variant)
		c.Change = HashAdded
		if t.Deployed != nil && hasService(t.Deployed, svc.Name) {
			c.DeployedSpecHash, _ = ServiceHash(t.Deployed, svc.Name, nil)
			switch {
			case c.SpecHash == "" || c.DeployedSpecHash == "":
				c.Change = HashUnknown
			case c.SpecHash == c.DeployedSpecHash:
				c.Change = HashUnchanged
			default:
				c.Change = HashChanged
			}
		}
		e.Services = append(e.Services, c)
	}
	if t.Deployed != nil {
		for _, svc := range t.Deployed.Spec.Services {
			if !hasService(rendered, svc.Name) {
				c := ServiceHashChange{Service: svc.Name, Change: HashRemoved}
				c.DeployedSpecHash, _ = ServiceHash(t.Deployed, svc.Name, nil)
				e.Services = append(e.Services, c)
			}
		}
	}
	slices.SortFunc(e.Services, func(a, b ServiceHashChange) int { return strings.Compare(a.Service, b.Service) })
	return e
}

// stableHash is hash of rendered, or "" and why when it cannot be known
// before deploying: it needs repository files, or it differs in variant
// (rendered with other deploy-time values).
func stableHash(hash func(*Manifest) (string, error), rendered, variant *Manifest) (string, string) {
	h, err := hash(rendered)
	if err != nil {
		return "", hashUnknownFiles
	}
	if variant != nil {
		if v, err := hash(variant); err != nil || v != h {
			return "", hashUnknownDeploy
		}
	}
	return h, ""
}

func hasService(m *Manifest, name string) bool {
	return slices.ContainsFunc(m.Spec.Services, func(s Service) bool { return s.Name == name })
}

// shortHash is how plan text shows a service's hash.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// writeHashes writes the plan's spec hashes: each environment's, then its
// services marked + added, ~ changed, = unchanged, - removed, ? unknown.
func writeHashes(b *strings.Builder, hashes []EnvironmentHash) {
	marks := map[string]string{HashAdded: "+", HashChanged: "~", HashUnchanged: "=", HashRemoved: "-", HashUnknown: "?"}
	for _, e := range hashes {
		switch {
		case e.Unknown != "":
			fmt.Fprintf(b, "  %s: unknown until deployed: %s\n", e.Environment, e.Unknown)
		case e.DeployedSpecHash == "":
			fmt.Fprintf(b, "  %s: %s (nothing deployed to compare)\n", e.Environment, e.SpecHash)
		case e.Changed:
			fmt.Fprintf(b, "  %s: %s (changes from %s)\n", e.Environment, e.SpecHash, shortHash(e.DeployedSpecHash))
		default:
			fmt.Fprintf(b, "  %s: %s (unchanged)\n", e.Environment, e.SpecHash)
		}
		for _, s := range e.Services {
			fmt.Fprintf(b, "    %s %s", marks[s.Change], s.Service)
			if s.SpecHash != "" {
				fmt.Fprintf(b, " %s", shortHash(s.SpecHash))
			}
			if s.Change == HashChanged || s.Change == HashRemoved {
				fmt.Fprintf(b, " (was %s)", shortHash(s.DeployedSpecHash))
			}
			b.WriteByte('\n')
		}
	}
}
