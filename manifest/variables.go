package manifest

import (
	"fmt"
	"sort"
	"strings"
)

// Variable namespaces. Only vars and the system variables below resolve;
// secrets is reserved for secret references.
const (
	NamespaceVars    = "vars"
	NamespaceSecrets = "secrets"
)

// System variables, by their full reference name.
const (
	SystemAppName      = "app.name"
	SystemEnvName      = "env.name"
	SystemEnvSlug      = "env.slug"
	SystemGitBranch    = "git.branch"
	SystemGitSHA       = "git.sha"
	SystemDeploymentID = "deployment.id"
)

// systemVariables lists every system variable; the git ones need spec.manifest.
var systemVariables = map[string]bool{
	SystemAppName:      false,
	SystemEnvName:      false,
	SystemEnvSlug:      false,
	SystemGitBranch:    true,
	SystemGitSHA:       true,
	SystemDeploymentID: false,
}

// Variable limits from the spec's Variables section.
const (
	maxVariableNameBytes  = 63
	maxVariableValueBytes = 65536
)

// Reference is one ${{ namespace.name }} occurrence.
type Reference struct {
	Namespace string
	Name      string
}

// String is the canonical spelling, as messages quote it.
func (r Reference) String() string { return "${{ " + r.Namespace + "." + r.Name + " }}" }

// key is the reference without braces, such as vars.domain or env.slug.
func (r Reference) key() string { return r.Namespace + "." + r.Name }

// templatePart is either literal text (escapes already resolved) or one
// reference.
type templatePart struct {
	text string
	ref  *Reference
}

// templateError is a malformed reference inside a field's text.
type templateError struct {
	fragment string
	reason   string
}

func (e *templateError) Error() string {
	return fmt.Sprintf("malformed reference %q: %s", e.fragment, e.reason)
}

const (
	refOpen   = "${{"
	refEscape = "$${{"
	refClose  = "}}"
)

// scanTemplate walks s once, left to right, calling text for each piece of
// literal text (escapes already resolved; pieces are slices of s, so nothing
// is allocated) and ref for each reference. $${{ is an escape for a literal
// ${{; ${VAR} and $VAR are ordinary text so shells and applications keep
// expanding them. Either callback may be nil.
func scanTemplate(s string, text func(string), ref func(Reference)) error {
	emit := func(t string) {
		if text != nil && t != "" {
			text(t)
		}
	}
	start := 0 // start of the pending literal text
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '$')
		if j < 0 {
			break
		}
		i += j
		switch {
		case strings.HasPrefix(s[i:], refEscape):
			emit(s[start:i])
			emit(refOpen)
			i += len(refEscape)
			start = i
		case strings.HasPrefix(s[i:], refOpen):
			inner := s[i+len(refOpen):]
			end := strings.Index(inner, refClose)
			if end < 0 {
				return &templateError{fragment: s[i:], reason: "no closing }}"}
			}
			r, err := parseReference(inner[:end])
			if err != nil {
				return &templateError{fragment: s[i : i+len(refOpen)+end+len(refClose)], reason: err.Error()}
			}
			emit(s[start:i])
			if ref != nil {
				ref(r)
			}
			i += len(refOpen) + end + len(refClose)
			start = i
		default:
			i++
		}
	}
	emit(s[start:])
	return nil
}

// parseTemplate splits s into literal text and references.
func parseTemplate(s string) ([]templatePart, error) {
	var parts []templatePart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, templatePart{text: lit.String()})
			lit.Reset()
		}
	}
	err := scanTemplate(s, func(t string) { lit.WriteString(t) }, func(r Reference) {
		flush()
		parts = append(parts, templatePart{ref: &r})
	})
	if err != nil {
		return nil, err
	}
	flush()
	return parts, nil
}

// parseReference parses the inside of ${{ }}: namespace.name with optional
// surrounding whitespace. References are lookups only, so anything else
// (operators, calls, more dots) is malformed.
func parseReference(inner string) (Reference, error) {
	inner = strings.Trim(inner, " \t")
	ns, name, ok := strings.Cut(inner, ".")
	if !ok || ns == "" || name == "" {
		return Reference{}, fmt.Errorf("expected namespace.name, such as vars.domain")
	}
	for k := 0; k < len(ns); k++ {
		if c := ns[k]; c < 'a' || c > 'z' {
			return Reference{}, fmt.Errorf("namespace %q must be lowercase letters", ns)
		}
	}
	if !validVariableName(name) {
		return Reference{}, fmt.Errorf("name %q must start with a letter or _ and use letters, digits, _ or -", name)
	}
	return Reference{Namespace: ns, Name: name}, nil
}

// validVariableName applies the spec's variable-name rule.
func validVariableName(name string) bool {
	if name == "" || len(name) > maxVariableNameBytes {
		return false
	}
	for k := 0; k < len(name); k++ {
		c := name[k]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if k == 0 && !letter {
			return false
		}
		if !letter && !(c >= '0' && c <= '9') && c != '-' {
			return false
		}
	}
	return true
}

// ContainsReference reports whether s holds a ${{ }} reference, well-formed
// or not. An escaped $${{ is literal text and does not count.
func ContainsReference(s string) bool {
	if !strings.Contains(s, refOpen) {
		return false
	}
	found := false
	err := scanTemplate(s, nil, func(Reference) { found = true })
	return found || err != nil
}

// wholeReference returns the reference when s is exactly one reference and
// nothing else, as replicas = "${{ vars.web_replicas }}" is.
func wholeReference(s string) (Reference, bool) {
	if !strings.HasPrefix(s, refOpen) || !strings.HasSuffix(s, refClose) {
		return Reference{}, false
	}
	parts, err := parseTemplate(s)
	if err != nil || len(parts) != 1 || parts[0].ref == nil {
		return Reference{}, false
	}
	return *parts[0].ref, true
}

// DeclaredVariables is every name declared in spec.variables, any
// environment's variables or spec.previews.variables.
func DeclaredVariables(m *Manifest) map[string]bool {
	names := make(map[string]bool, len(m.Spec.Variables))
	for k := range m.Spec.Variables {
		names[k] = true
	}
	for _, env := range m.Spec.Environments {
		for k := range env.Variables {
			names[k] = true
		}
	}
	if m.Spec.Previews != nil {
		for k := range m.Spec.Previews.Variables {
			names[k] = true
		}
	}
	return names
}

// ValidateReferencesFor checks every ${{ }} reference of an unrendered
// manifest (syntax, namespaces, system variables, declarations, and that
// references appear only in fields that accept them) and its variable
// names and values; values that contain references are validated once
// rendered. repositoryBacked says whether the application is
// repository-backed whatever spec.manifest says: a manifest fetched from a
// repository may omit spec.manifest and still use git.branch and git.sha.
func ValidateReferencesFor(m *Manifest, repositoryBacked bool) Errors {
	var errs Errors
	declared := DeclaredVariables(m)
	checkRef := func(path string, ref Reference) {
		switch ref.Namespace {
		case NamespaceVars:
			if !declared[ref.Name] {
				errs = append(errs, FieldError{Path: path, Code: "variable_undeclared",
					Message: fmt.Sprintf("%s references variable %q, which is declared nowhere: add it to [spec.variables], [spec.environments.<name>.variables] or [spec.previews.variables]", ref, ref.Name)})
			}
		case NamespaceSecrets:
			errs = append(errs, FieldError{Path: path, Code: "variable_reference_reserved",
				Message: fmt.Sprintf("%s: the secrets namespace is reserved; mount secrets as files with [[spec.services.secrets]]", ref)})
		default:
			needsRepo, ok := systemVariables[ref.key()]
			switch {
			case !ok && isSystemNamespace(ref.Namespace):
				errs = append(errs, FieldError{Path: path, Code: "variable_reference_unknown",
					Message: fmt.Sprintf("%s is not a system variable; known ones are %s", ref, strings.Join(systemVariableNames(), ", "))})
			case !ok:
				errs = append(errs, FieldError{Path: path, Code: "variable_reference_unknown",
					Message: fmt.Sprintf("%s uses unknown namespace %q; use vars or a system variable (%s)", ref, ref.Namespace, strings.Join(systemVariableNames(), ", "))})
			case needsRepo && !repositoryBacked:
				errs = append(errs, FieldError{Path: path, Code: "variable_reference_unavailable",
					Message: fmt.Sprintf("%s is only set for repository-backed applications: add [spec.manifest] or remove the reference", ref)})
			}
		}
	}
	walkFields(m, func(f *field) {
		switch f.kind {
		case fieldInt:
			if !f.num.IsRef() {
				return
			}
			ref, ok := wholeReference(f.num.Ref)
			if !ok {
				msg := fmt.Sprintf("must be an integer or exactly one ${{ }} reference, got %q", f.num.Ref)
				if _, err := parseTemplate(f.num.Ref); err != nil {
					msg = err.Error()
				}
				errs = append(errs, FieldError{Path: f.path, Code: "variable_reference_invalid", Message: msg})
				return
			}
			if !f.allowed {
				errs = append(errs, forbiddenReference(f.path))
				return
			}
			checkRef(f.path, ref)
		default:
			if !ContainsReference(f.value) {
				return
			}
			if !f.allowed {
				errs = append(errs, forbiddenReference(f.path))
				return
			}
			if err := scanTemplate(f.value, nil, func(r Reference) { checkRef(f.path, r) }); err != nil {
				errs = append(errs, FieldError{Path: f.path, Code: "variable_reference_invalid", Message: err.Error()})
			}
		}
	})
	errs = append(errs, validateVariableTable("spec.variables", m.Spec.Variables, checkRef)...)
	for _, name := range sortedKeysOf(m.Spec.Environments) {
		errs = append(errs, validateVariableTable("spec.environments."+name+".variables", m.Spec.Environments[name].Variables, checkRef)...)
	}
	if m.Spec.Previews != nil {
		errs = append(errs, validateVariableTable("spec.previews.variables", m.Spec.Previews.Variables, checkRef)...)
	}
	return errs
}

func forbiddenReference(path string) FieldError {
	return FieldError{Path: path, Code: "variable_reference_forbidden",
		Message: "this field cannot reference variables; references are allowed in environment values, commands, arguments, health checks, replicas, resources, rollout, route hostname and redirect to, job command, job and backup schedules, backup retention, Postgres settings, import environment, secret mount names and build inputs"}
}

// validateVariableTable checks names and values of one variables table.
// String values may reference system variables but not other variables, so a
// variable's value never depends on another's.
func validateVariableTable(path string, vars map[string]Value, checkRef func(string, Reference)) Errors {
	var errs Errors
	for _, name := range sortedKeysOf(vars) {
		p := path + "." + name
		if !validVariableName(name) {
			errs = append(errs, FieldError{Path: p, Code: "variable_name_invalid",
				Message: fmt.Sprintf("variable name %q must be 1-63 bytes, start with a letter or _ and use letters, digits, _ or -", name)})
		}
		v := vars[name]
		if v.Interface() == nil {
			errs = append(errs, FieldError{Path: p, Code: "variable_value_invalid", Message: "variables are strings, integers or booleans"})
			continue
		}
		if !v.IsString() {
			continue
		}
		s := v.String()
		if len(s) > maxVariableValueBytes {
			errs = append(errs, FieldError{Path: p, Code: "variable_value_invalid",
				Message: fmt.Sprintf("string values are at most %d bytes, this one has %d", maxVariableValueBytes, len(s))})
			continue
		}
		if !ContainsReference(s) {
			continue
		}
		parts, err := parseTemplate(s)
		if err != nil {
			errs = append(errs, FieldError{Path: p, Code: "variable_reference_invalid", Message: err.Error()})
			continue
		}
		for _, part := range parts {
			if part.ref == nil {
				continue
			}
			if part.ref.Namespace == NamespaceVars {
				errs = append(errs, FieldError{Path: p, Code: "variable_value_invalid",
					Message: fmt.Sprintf("a variable's value may reference system variables but not other variables, found %s", part.ref)})
				continue
			}
			checkRef(p, *part.ref)
		}
	}
	return errs
}

func isSystemNamespace(ns string) bool {
	for k := range systemVariables {
		if strings.HasPrefix(k, ns+".") {
			return true
		}
	}
	return false
}

func systemVariableNames() []string {
	names := make([]string, 0, len(systemVariables))
	for k := range systemVariables {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
