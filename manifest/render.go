package manifest

import (
	"fmt"
	"strings"
)

// RenderContext says for which environment or preview a manifest is rendered
// and carries the system variables' values.
type RenderContext struct {
	// Environment is the environment's name; for a preview, its slug.
	Environment string
	// Preview renders with [spec.previews.variables] and never with an
	// [spec.environments.<name>] block.
	Preview bool
	// Slug is env.slug; the environment name when empty.
	Slug string
	// AppName is app.name; metadata.name when empty.
	AppName string
	// GitBranch and GitSHA are the branch and commit the manifest was read
	// from (repository-backed applications only). A GitSHA also lets a
	// fetched manifest without spec.manifest use git.branch and git.sha.
	GitBranch, GitSHA string
	// DeploymentID is deployment.id; plans use "preview".
	DeploymentID string
	// Overrides replace variable values, such as app render --var k=v.
	Overrides map[string]Value
}

// PlanDeploymentID is the deployment.id plans render with, since no
// deployment exists yet.
const PlanDeploymentID = "preview"

// PlanGitSHA is the git.sha plans of unpinned repository manifests render
// with, since nothing is fetched.
const PlanGitSHA = "0000000000000000000000000000000000000000"

// target names what is rendered in messages: "environment production" or
// "preview notes-feat-3fa2c1".
func (rc RenderContext) target() string {
	if rc.Preview {
		return "preview " + rc.Environment
	}
	return "environment " + rc.Environment
}

// Scope returns every variable in scope for rc, keyed by its reference name
// without braces (vars.domain, env.name, ...): system variables, and each
// declared variable's value for the environment or preview (an override, else
// the environment's or previews' own value, else the default). String values'
// system references are rendered. A deployment records this map so that
// retries never read variables again. Variables without a value are absent.
func Scope(m *Manifest, rc RenderContext) map[string]Value {
	scope, _ := buildScope(m, rc)
	return scope
}

// buildScope is Scope, also returning problems with variable values.
func buildScope(m *Manifest, rc RenderContext) (map[string]Value, Errors) {
	scope := make(map[string]Value, len(m.Spec.Variables)+len(systemVariables))
	sys := systemValues(m, rc)
	for k, v := range sys {
		scope[k] = StringValue(v)
	}
	set := func(vars map[string]Value) {
		for k, v := range vars {
			scope[NamespaceVars+"."+k] = v
		}
	}
	set(m.Spec.Variables)
	if rc.Preview {
		if m.Spec.Previews != nil {
			set(m.Spec.Previews.Variables)
		}
	} else if env, ok := m.Spec.Environments[rc.Environment]; ok {
		set(env.Variables)
	}
	set(rc.Overrides)

	var errs Errors
	for _, k := range sortedKeysOf(scope) {
		v := scope[k]
		// Escapes count too: "$${{" in a value renders to a literal "${{".
		if !strings.HasPrefix(k, NamespaceVars+".") || !v.IsString() || !strings.Contains(v.String(), refOpen) {
			continue
		}
		// A variable's value may reference system variables only, so one
		// pass resolves it and nothing is evaluated twice.
		out, err := renderText(v.String(), func(ref Reference) (Value, error) {
			if ref.Namespace == NamespaceVars {
				return Value{}, fmt.Errorf("a variable's value cannot reference another variable (%s)", ref)
			}
			if s, ok := sys[ref.key()]; ok {
				return StringValue(s), nil
			}
			return Value{}, fmt.Errorf("%s has no value for %s", ref, rc.target())
		})
		if err != nil {
			errs = append(errs, FieldError{Path: k, Code: "variable_value_invalid", Message: err.Error()})
			delete(scope, k)
			continue
		}
		scope[k] = StringValue(out)
	}
	return scope, errs
}

// systemValues are the system variables that have a value for rc.
func systemValues(m *Manifest, rc RenderContext) map[string]string {
	sys := make(map[string]string, len(systemVariables))
	put := func(k, v string) {
		if v != "" {
			sys[k] = v
		}
	}
	app := rc.AppName
	if app == "" {
		app = m.Metadata.Name
	}
	put(SystemAppName, app)
	put(SystemEnvName, rc.Environment)
	slug := rc.Slug
	if slug == "" {
		slug = rc.Environment
	}
	put(SystemEnvSlug, slug)
	// Validation decides where git.* may be used; a manifest fetched from a
	// repository may omit spec.manifest and still have them.
	put(SystemGitBranch, rc.GitBranch)
	put(SystemGitSHA, rc.GitSHA)
	put(SystemDeploymentID, rc.DeploymentID)
	return sys
}

// Render returns a copy of m with every reference replaced by its value for
// the environment or preview rc names. A field that is exactly one reference
// takes the variable's own type: an integer field needs an integer variable
// (strings are never parsed into numbers). Any other text renders to a string,
// and substituted text is never evaluated again. File contents, names and
// other fields that cannot hold references are left as written.
//
// A manifest whose references are invalid (see ValidateReferencesFor) is not
// rendered: Render returns those errors and a nil manifest. Otherwise it
// reports every field it could not render, each naming the
// environment, the field path and the variable; when everything rendered, it
// validates the result (ValidateOptions{Rendered: true}) and reports that
// instead. Callers that know stored secret names validate again with them.
func Render(m *Manifest, rc RenderContext) (*Manifest, Errors) {
	// A reference where none is allowed would survive rendering as text.
	if errs := ValidateReferencesFor(m, m.Spec.Manifest != nil || rc.GitSHA != ""); len(errs) > 0 {
		return nil, errs
	}
	scope, errs := buildScope(m, rc)
	out := cloneManifest(m)
	lookup := func(path string) func(Reference) (Value, error) {
		return func(ref Reference) (Value, error) {
			if v, ok := scope[ref.key()]; ok {
				return v, nil
			}
			if ref.Namespace == NamespaceVars {
				return Value{}, &missingValue{msg: fmt.Sprintf("%s has no value for %s in %s: set it in [%s] or give [spec.variables] a default",
					ref, rc.target(), path, variablesTableFor(rc))}
			}
			return Value{}, &missingValue{msg: fmt.Sprintf("%s has no value for %s in %s", ref, rc.target(), path)}
		}
	}
	walkFields(out, func(f *field) {
		if !f.allowed {
			return
		}
		switch f.kind {
		case fieldInt:
			if !f.num.IsRef() {
				return
			}
			n, err := renderInt(f.num.Ref, lookup(f.path))
			if err != nil {
				errs = append(errs, renderError(f.path, err))
				return
			}
			*f.num = Int{N: n}
		default:
			if !strings.Contains(f.value, refOpen) {
				return
			}
			s, err := renderText(f.value, lookup(f.path))
			if err != nil {
				errs = append(errs, renderError(f.path, err))
				return
			}
			f.set(s)
		}
	})
	if len(errs) == 0 {
		// Rendered values pass the fields' usual rules, such as replicas
		// 1-100 or a valid hostname, now that they are known.
		// Every reference was substituted above, so any "${{" left is
		// literal text: an escape ($${{) or a substituted value. Those are
		// not unrendered references.
		for _, e := range Validate(out, ValidateOptions{Rendered: true}) {
			if e.Code != "reference_unrendered" {
				errs = append(errs, e)
			}
		}
	}
	return out, errs
}

// missingValue marks a reference without a value, reported as
// variable_value_missing.
type missingValue struct{ msg string }

func (e *missingValue) Error() string { return e.msg }

// typeMismatch marks a whole-field reference whose variable has the wrong
// type for the field.
type typeMismatch struct{ msg string }

func (e *typeMismatch) Error() string { return e.msg }

func renderError(path string, err error) FieldError {
	code := "variable_reference_invalid"
	switch err.(type) {
	case *missingValue:
		code = "variable_value_missing"
	case *typeMismatch:
		code = "variable_type_mismatch"
	}
	return FieldError{Path: path, Code: code, Message: err.Error()}
}

func variablesTableFor(rc RenderContext) string {
	if rc.Preview {
		return "spec.previews.variables"
	}
	return "spec.environments." + rc.Environment + ".variables"
}

// renderText substitutes every reference in s once.
func renderText(s string, lookup func(Reference) (Value, error)) (string, error) {
	var b strings.Builder
	b.Grow(len(s))
	var lookupErr error
	err := scanTemplate(s, func(t string) { b.WriteString(t) }, func(r Reference) {
		v, err := lookup(r)
		if err != nil {
			if lookupErr == nil {
				lookupErr = err
			}
			return
		}
		b.WriteString(v.String())
	})
	if err != nil {
		return "", err
	}
	if lookupErr != nil {
		return "", lookupErr
	}
	return b.String(), nil
}

// renderInt resolves an integer field's single reference, keeping its type.
func renderInt(s string, lookup func(Reference) (Value, error)) (int64, error) {
	ref, ok := wholeReference(s)
	if !ok {
		return 0, fmt.Errorf("must be an integer or exactly one ${{ }} reference, got %q", s)
	}
	v, err := lookup(ref)
	if err != nil {
		return 0, err
	}
	n, ok := v.Interface().(int64)
	if !ok {
		return 0, &typeMismatch{msg: fmt.Sprintf("%s is %s %s, but this field needs an integer; strings are never parsed into numbers, so declare the variable as an integer (replicas = 3, not \"3\")",
			ref, variableKindPhrase(v), quoteVariableValue(v))}
	}
	return n, nil
}

func variableKindPhrase(v Value) string {
	switch v.Interface().(type) {
	case string:
		return "the string"
	case bool:
		return "the boolean"
	}
	return "the value"
}

func quoteVariableValue(v Value) string {
	if v.IsString() {
		return fmt.Sprintf("%q", v.String())
	}
	return v.String()
}
