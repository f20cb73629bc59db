package manifest

import (
	"fmt"
	"sort"
	"strings"
)

// ExistingEnvironment is an environment as it is now, with its source: the
// branch (and pinned commit) of the manifest repository it follows, the
// environment it receives promoted releases from, or neither (it deploys the
// saved manifest).
type ExistingEnvironment struct {
	Name        string
	Branch      string
	Commit      string
	PromoteFrom string
	Sync        bool
}

// Environment change kinds, with the marker a plan prints before each.
const (
	EnvironmentCreated    = "created"
	EnvironmentChanged    = "changed"
	EnvironmentUndeclared = "undeclared"
)

// EnvironmentChange is one line of a plan's Environments section.
type EnvironmentChange struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
}

// String renders the line as app plan prints it, such as
// "+ staging: created, deploys from branch main, follows pushes".
func (c EnvironmentChange) String() string {
	marker := "~"
	switch c.Kind {
	case EnvironmentCreated:
		marker = "+"
	case EnvironmentUndeclared:
		marker = "!"
	}
	return marker + " " + c.Name + ": " + c.Description
}

// DefaultEnvironment is the environment an application that declares none
// gets when it is created.
const DefaultEnvironment = "production"

// environmentSource is where an environment deploys from, and whether it
// follows pushes.
type environmentSource struct {
	branch, commit, promoteFrom string
	sync                        bool
}

// describe is the source as a plan names it.
func (s environmentSource) describe() string {
	switch {
	case s.promoteFrom != "":
		return "releases promoted from " + s.promoteFrom
	case s.commit != "" && s.branch != "":
		return "branch " + s.branch + " pinned at commit " + shortCommit(s.commit)
	case s.commit != "":
		return "commit " + shortCommit(s.commit)
	case s.branch != "":
		return "branch " + s.branch
	}
	return "the saved manifest"
}

// follows reports whether pushes deploy it: sync opted in on a branch that
// is not pinned, and not promoted.
func (s environmentSource) follows() bool {
	return s.sync && s.commit == "" && s.branch != "" && s.promoteFrom == ""
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func blockSetsSource(b EnvironmentBlock) bool {
	return b.Branch != "" || b.Commit != "" || b.PromoteFrom != "" || b.Sync != nil
}

// declaredSource is where a declared block makes its environment deploy
// from: its own settings, else the branch and pinned commit spec.manifest
// names (commit only without a branch of its own).
func declaredSource(m *Manifest, b EnvironmentBlock) environmentSource {
	if b.PromoteFrom != "" {
		return environmentSource{promoteFrom: b.PromoteFrom}
	}
	src := environmentSource{branch: b.Branch, commit: b.Commit, sync: b.Sync != nil && *b.Sync}
	if ms := m.Spec.Manifest; ms != nil && ms.Repository != nil {
		if src.branch == "" {
			src.branch = ms.Repository.Branch
			if src.commit == "" {
				src.commit = ms.Repository.Commit
			}
		}
	} else {
		// Without a manifest repository an environment deploys the saved
		// manifest; validation rejects branch, commit and sync there.
		src.branch, src.commit = "", ""
	}
	return src
}

func defaultSource(m *Manifest) environmentSource {
	return declaredSource(m, EnvironmentBlock{})
}

// ExistingEnvironments derives the environments an application saved with m
// has, for offline plans that cannot ask a server: its declared environments
// with their sources, or production when it declares none.
func ExistingEnvironments(m *Manifest) []ExistingEnvironment {
	if m == nil {
		return nil
	}
	if len(m.Spec.Environments) == 0 {
		src := defaultSource(m)
		return []ExistingEnvironment{{Name: DefaultEnvironment, Branch: src.branch, Commit: src.commit}}
	}
	var out []ExistingEnvironment
	for _, name := range sortedKeysOf(m.Spec.Environments) {
		src := declaredSource(m, m.Spec.Environments[name])
		out = append(out, ExistingEnvironment{Name: name, Branch: src.branch, Commit: src.commit, PromoteFrom: src.promoteFrom, Sync: src.sync})
	}
	return out
}

// EnvironmentsSummary lists how saving new (over old, nil for a new
// application) converges the environments: declared ones that don't exist
// are created; existing ones whose block sets their source, or whose old
// block did, change to it; a block setting no source keeps it; environments
// no longer declared are kept and reported.
func EnvironmentsSummary(old, new *Manifest, existing []ExistingEnvironment) []EnvironmentChange {
	var out []EnvironmentChange
	current := make(map[string]ExistingEnvironment, len(existing))
	for _, e := range existing {
		current[e.Name] = e
	}
	declared := new.Spec.Environments
	if len(declared) == 0 && len(existing) == 0 {
		declared = map[string]EnvironmentBlock{DefaultEnvironment: {}}
	}
	for _, name := range sortedKeysOf(declared) {
		block := declared[name]
		target := declaredSource(new, block)
		cur, exists := current[name]
		if !exists {
			desc := "created, deploys from " + target.describe()
			if target.follows() {
				desc += ", follows pushes"
			}
			out = append(out, EnvironmentChange{Name: name, Kind: EnvironmentCreated, Description: desc})
			continue
		}
		var oldBlock EnvironmentBlock
		if old != nil {
			oldBlock = old.Spec.Environments[name]
		}
		if !blockSetsSource(block) && !blockSetsSource(oldBlock) {
			continue
		}
		from := environmentSource{branch: cur.Branch, commit: cur.Commit, promoteFrom: cur.PromoteFrom, sync: cur.Sync}
		var parts []string
		if target.describe() != from.describe() {
			parts = append(parts, "deploys from "+target.describe()+" instead of "+from.describe())
		}
		switch {
		case target.follows() && !from.follows():
			parts = append(parts, "follows pushes")
		case !target.follows() && from.follows():
			parts = append(parts, "no longer follows pushes")
		}
		if len(parts) > 0 {
			out = append(out, EnvironmentChange{Name: name, Kind: EnvironmentChanged, Description: strings.Join(parts, ", ")})
		}
	}
	if len(new.Spec.Environments) > 0 || (old != nil && len(old.Spec.Environments) > 0) {
		for _, e := range existing {
			if _, ok := new.Spec.Environments[e.Name]; ok {
				continue
			}
			out = append(out, EnvironmentChange{Name: e.Name, Kind: EnvironmentUndeclared,
				Description: "no longer declared; kept until deleted with `slipway env delete`"})
		}
	}
	return out
}

// ServiceRollout is a service's effective rollout settings, as app plan
// lists them.
type ServiceRollout struct {
	Service string `json:"service"`
	Order   string `json:"order"`
	// Derived is true when the order comes from the mounts rather than the
	// manifest.
	Derived bool `json:"derived"`
	// MonitorSeconds is the window, or the reference of an unrendered
	// manifest.
	MonitorSeconds string `json:"monitor_seconds"`
}

// Rollouts lists every service's effective rollout order (see
// EffectiveRolloutOrder) and monitor window, by service name.
func Rollouts(m *Manifest) []ServiceRollout {
	out := make([]ServiceRollout, 0, len(m.Spec.Services))
	for i := range m.Spec.Services {
		svc := &m.Spec.Services[i]
		order, derived := EffectiveRolloutOrder(svc)
		r := ServiceRollout{Service: svc.Name, Order: order, Derived: derived, MonitorSeconds: fmt.Sprint(DefaultRolloutMonitor)}
		if ro := svc.Rollout; ro != nil && ro.MonitorSeconds != nil {
			r.MonitorSeconds = intText(ro.MonitorSeconds)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Service < out[j].Service })
	return out
}

// Plan is what app plan shows offline.
type Plan struct {
	Changes      []Change            `json:"changes"`
	Environments []EnvironmentChange `json:"environments"`
	Rollouts     []ServiceRollout    `json:"rollouts"`
	// Hashes is the spec hash deploying the manifest would record in each
	// environment, with every service's hash and whether it changes
	// (PlanHashes); the caller sets it, since what runs is its to know.
	Hashes   []EnvironmentHash `json:"hashes"`
	Warnings Errors            `json:"warnings"`
}

// NewPlan compares old (nil for a new application) with new. existing is
// the environments as they are; nil derives them from old. Warnings are the
// caller's, since they come from validation.
func NewPlan(old, new *Manifest, existing []ExistingEnvironment) Plan {
	if existing == nil {
		existing = ExistingEnvironments(old)
	}
	p := Plan{
		Changes:      Diff(old, new),
		Environments: EnvironmentsSummary(old, new, existing),
		Rollouts:     Rollouts(new),
		Hashes:       []EnvironmentHash{},
		Warnings:     Errors{},
	}
	// Empty lists, not nulls, for JSON readers.
	if p.Changes == nil {
		p.Changes = []Change{}
	}
	if p.Environments == nil {
		p.Environments = []EnvironmentChange{}
	}
	return p
}

// FormatPlan renders a plan as text for the CLI.
func FormatPlan(p Plan) string {
	var b strings.Builder
	b.WriteString("Changes:\n")
	if len(p.Changes) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, c := range p.Changes {
		switch c.Kind {
		case ChangeAdded:
			fmt.Fprintf(&b, "  + %s", c.Path)
			if c.After != "" {
				fmt.Fprintf(&b, ": %s", c.After)
			}
		case ChangeRemoved:
			fmt.Fprintf(&b, "  - %s", c.Path)
			if c.Before != "" {
				fmt.Fprintf(&b, ": %s", c.Before)
			}
		default:
			fmt.Fprintf(&b, "  ~ %s: %s -> %s", c.Path, c.Before, c.After)
		}
		b.WriteByte('\n')
	}
	if len(p.Environments) > 0 {
		b.WriteString("\nEnvironments:\n")
		for _, e := range p.Environments {
			b.WriteString("  " + e.String() + "\n")
		}
	}
	if len(p.Rollouts) > 0 {
		b.WriteString("\nRollout:\n")
		for _, r := range p.Rollouts {
			how := "explicit"
			if r.Derived {
				how = "derived"
			}
			fmt.Fprintf(&b, "  %s: %s (%s), monitor %ss\n", r.Service, r.Order, how, r.MonitorSeconds)
		}
	}
	if len(p.Hashes) > 0 {
		b.WriteString("\nSpec hash:\n")
		writeHashes(&b, p.Hashes)
	}
	if len(p.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, w := range p.Warnings {
			b.WriteString("  " + w.Error() + "\n")
		}
	}
	return b.String()
}
