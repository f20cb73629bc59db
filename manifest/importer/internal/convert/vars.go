package convert

import (
	"regexp"

	"github.com/slipwayhq/slipway/manifest"
)

var varNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,62}$`)

// ValidVarName reports whether s can name a Slipway variable.
func ValidVarName(s string) bool { return varNameRE.MatchString(s) }

// Vars collects the Slipway variables an import declares for values the
// source platform supplies at deployment time (skali's ${NAME}, compose's
// ${VAR}, ply's $VAR, hakopod's {{config.name}}), each with its inline
// default when the source gives one.
type Vars struct {
	D *Diags
	// What names such a value in the source's terms, for messages:
	// "project value", "compose variable".
	What string
	// Label, when set, names one value instead: "the deploy-time value $PW".
	Label    func(name string) string
	defaults map[string]*string
}

// Ref records a reference at source path at to the value name, with its
// inline default (nil for none), and returns the Slipway reference text.
// A value first seen without a default is declared with an empty one and
// a warning; two different defaults for one name are an error.
func (v *Vars) Ref(at, name string, def *string) string {
	if v.defaults == nil {
		v.defaults = map[string]*string{}
	}
	prev, seen := v.defaults[name]
	switch {
	case !seen:
		if def != nil {
			d := EscapeRefs(*def)
			v.defaults[name] = &d
		} else {
			v.defaults[name] = nil
			v.D.Warn(at, "%s has no default; it becomes the variable %s with an empty default: set its value for each environment in [spec.environments.<env>.variables]", v.label(name), name)
		}
	case def != nil && prev != nil && *prev != EscapeRefs(*def):
		v.D.Error(at, "%s has two different inline defaults", v.label(name))
	case def != nil && prev == nil:
		d := EscapeRefs(*def)
		v.defaults[name] = &d
	}
	return "${{ vars." + name + " }}"
}

func (v *Vars) label(name string) string {
	if v.Label != nil {
		return v.Label(name)
	}
	return v.What + " " + name
}

// Used reports whether any value was referenced.
func (v *Vars) Used() bool { return len(v.defaults) > 0 }

// Declare writes every referenced value into spec.variables.
func (v *Vars) Declare(m *manifest.Manifest) {
	for _, k := range SortedKeys(v.defaults) {
		if m.Spec.Variables == nil {
			m.Spec.Variables = map[string]manifest.Value{}
		}
		val := ""
		if v.defaults[k] != nil {
			val = *v.defaults[k]
		}
		m.Spec.Variables[k] = manifest.StringValue(val)
	}
}
