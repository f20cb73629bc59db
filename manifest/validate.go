package manifest

import (
	"fmt"
	"strconv"
)

// ValidateOptions carries what validation needs from outside the manifest.
type ValidateOptions struct {
	// StoredSecretNames are the names in the application's secret store; a
	// spec.secrets declaration of one of them is a secret_name_conflict.
	StoredSecretNames []string
	// Rendered says the manifest's variables were rendered: values are
	// checked in full and a leftover reference is an error. Otherwise
	// values holding references are checked once rendered, and references
	// themselves are checked by ValidateReferencesFor.
	Rendered bool
	// RepositoryBacked says the manifest belongs to a repository-backed
	// application even though it has no spec.manifest, as a manifest
	// fetched from the repository may omit it.
	RepositoryBacked bool
}

// Budgets from the spec's table. Each is enforced with its own error.
const (
	MaxServices             = 64
	MaxReplicas             = 100
	MaxVolumes              = 64
	MaxRoutes               = 64
	MaxGeneratedSecrets     = 64
	MaxSecretMounts         = 64
	MaxVariablesPerTable    = 128
	MaxEnvironments         = 64
	MaxEnvironmentEntries   = 256
	MaxEnvironmentKeyBytes  = 255
	MaxEnvironmentValue     = 65536
	MaxCommandElements      = 128
	MaxCommandElementBytes  = 4096
	MaxMounts               = 32
	MaxFiles                = 32
	MaxFileBytes            = 512000
	MaxFilesTotalBytes      = 2 << 20
	MaxJobs                 = 16
	MaxExports              = 64
	MaxImports              = 64
	MaxApplicationsPerExp   = 64
	MaxJobTimeoutSeconds    = 86400
	MaxHealthcheckInterval  = 3600
	MaxHealthcheckStart     = 3600
	MaxHealthcheckRetries   = 100
	MaxRolloutMonitor       = 3600
	MaxCPUMillis            = 1048576
	MaxServiceDependencies  = 64
	MaxBuildArgsTotalBytes  = 256 << 10
	MinSyncIntervalSeconds  = 60
	MaxSyncIntervalSeconds  = 86400
	MinRandomSecretBytes    = 16
	MaxRandomSecretBytes    = 512
	MinMemoryBytes          = 6 << 20
	maxImageReferenceLength = 512
)

// Validate checks a decoded manifest and returns every problem at once, in
// document order, each with its field path and code. It does not modify m.
// Positions can be added with Errors.WithPositions.
func Validate(m *Manifest, opts ValidateOptions) Errors {
	if m == nil {
		return Errors{{Code: "manifest_empty", Message: "no manifest"}}
	}
	v := newValidator(m, opts)
	v.header()
	v.services()
	v.volumes()
	v.routes()
	v.jobs()
	v.generatedSecrets()
	v.variables()
	v.environments()
	v.previews()
	v.manifestSource()
	v.links()
	v.backups()
	v.extension()
	if !opts.Rendered {
		// References are checked by the variables engine; where it reports
		// a path, its error explains the problem better than the value
		// check that the unrendered reference also failed.
		v.errs = supersede(v.errs, ValidateReferencesFor(m, opts.RepositoryBacked || m.Spec.Manifest != nil))
	}
	// Decode reports mistyped values before anything is validated; a
	// manifest built otherwise (a field edit's JSON body decoded into a
	// part) carries them here. Such a value has no number to check further.
	return supersede(v.errs, deferredProblems(m))
}

// supersede replaces the errors of errs at the paths by's errors name with
// by's, which explain those paths' problems better.
func supersede(errs, by Errors) Errors {
	if len(by) == 0 {
		return errs
	}
	seen := make(map[string]bool, len(by))
	for _, e := range by {
		seen[e.Path] = true
	}
	kept := errs[:0]
	for _, e := range errs {
		if !seen[e.Path] {
			kept = append(kept, e)
		}
	}
	return append(kept, by...)
}

type validator struct {
	m            *Manifest
	opts         ValidateOptions
	errs         Errors
	serviceIndex map[string]int // name -> first index
	volumeNames  map[string]bool
	repoBacked   bool
}

func newValidator(m *Manifest, opts ValidateOptions) *validator {
	v := &validator{
		m:            m,
		opts:         opts,
		serviceIndex: make(map[string]int, len(m.Spec.Services)),
		volumeNames:  make(map[string]bool, len(m.Spec.Volumes)),
		repoBacked:   m.Spec.Manifest != nil || opts.RepositoryBacked,
	}
	for i, s := range m.Spec.Services {
		if _, dup := v.serviceIndex[s.Name]; !dup {
			v.serviceIndex[s.Name] = i
		}
	}
	for _, vol := range m.Spec.Volumes {
		v.volumeNames[vol.Name] = true
	}
	return v
}

func (v *validator) add(path, code, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	v.errs = append(v.errs, FieldError{Path: path, Code: code, Message: msg})
}

// deferred reports whether a value that accepts references holds one and
// its checks must wait for rendering. In a rendered manifest a leftover
// reference is an error.
//
// A rendered string is always checked as text: it may legitimately hold
// ${{, written as $${{ or substituted from a variable's value, and rendering
// never evaluates substituted text again.
func (v *validator) deferred(s string) bool {
	if v.opts.Rendered {
		return false
	}
	return ContainsReference(s)
}

// integer returns the concrete value of an integer setting, or false when it
// is absent or holds a reference.
// The field path is base+suffix, joined only for an error.
func (v *validator) integer(base, suffix string, i *Int) (int64, bool) {
	if i == nil {
		return 0, false
	}
	if i.IsRef() {
		if v.opts.Rendered {
			v.add(base+suffix, "reference_unrendered", "still holds a ${{ }} reference after rendering")
		}
		return 0, false
	}
	return i.N, true
}

// budget reports a budget_exceeded error when n is above limit.
func (v *validator) budget(path string, n, limit int, what string) bool {
	if n <= limit {
		return true
	}
	v.add(path, "budget_exceeded", "%s: %s exceeds the limit of %s", what, formatCount(n), formatCount(limit))
	return false
}

// formatCount writes 65536 as 65,536, as the spec's budget table does.
func formatCount(n int) string {
	s := strconv.Itoa(n)
	if n < 1000 && n > -1000 {
		return s
	}
	var out []byte
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func (v *validator) name(path, name, what string) {
	if msg := checkName(name); msg != "" {
		v.add(path, "name_invalid", "%s %s", what, msg)
	}
}

func (v *validator) header() {
	m := v.m
	switch m.APIVersion {
	case APIVersion, PiqueldAPIVersion:
	case "":
		v.add("api_version", "api_version_invalid", "api_version is required; use %q", APIVersion)
	default:
		v.add("api_version", "api_version_invalid", "unsupported api_version %q; use %q", m.APIVersion, APIVersion)
	}
	switch m.Kind {
	case Kind:
	case "":
		v.add("kind", "kind_invalid", "kind is required; use %q", Kind)
	default:
		v.add("kind", "kind_invalid", "unsupported kind %q; use %q", m.Kind, Kind)
	}
	v.name("metadata.name", m.Metadata.Name, "application name")
}

func (v *validator) volumes() {
	vols := v.m.Spec.Volumes
	v.budget("spec.volumes", len(vols), MaxVolumes, "named volumes per application")
	seen := make(map[string]bool, len(vols))
	for i, vol := range vols {
		p := joinIndex("spec.volumes", i) + ".name"
		v.name(p, vol.Name, "volume name")
		if seen[vol.Name] && vol.Name != "" {
			v.add(p, "volume_name_duplicate", "volume %q is declared more than once", vol.Name)
		}
		seen[vol.Name] = true
	}
}

// variables checks the size of every variables table; names, values and
// references are checked by ValidateReferencesFor.
func (v *validator) variables() {
	eachVariableTable(v.m, func(path string, vars map[string]Value) {
		v.budget(path, len(vars), MaxVariablesPerTable, "variables in "+path)
	})
}
