package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// OwnHostname is a route hostname an environment got of its own.
type OwnHostname struct {
	// Field is the route's hostname field, e.g. spec.routes[0].hostname.
	Field string `json:"field"`
	// Variable is the variable the route's hostname now references.
	Variable string `json:"variable"`
	// Shared is the literal hostname the other environments keep: the
	// variable's default in [spec.variables].
	Shared string `json:"shared"`
	// Hostname is what the environment serves, its own value of Variable.
	Hostname string `json:"hostname"`
	route    int
}

// GiveOwnHostnames lets environment envName serve hostnames of its own
// where the saved manifest's routes name a literal hostname, which every
// environment would otherwise render alike (and so clash, hostname_conflict):
// each such route's hostname becomes a variable reference, the literal
// becomes the variable's default (so every other environment keeps
// serving it) and envName gets its own value in
// [spec.environments.<envName>.variables], as the manifest contract has
// hostnames differ between environments. It is one field edit, a new
// revision keeping a TOML manifest's comments and layout. hostname, when
// set, is envName's hostname for the one literal route (hostname_ambiguous
// when there are several); otherwise each is derived from the literal:
// notes.example.com becomes notes-staging.example.com. With no literal
// route hostname it edits nothing and returns none.
func GiveOwnHostnames(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName, hostname string) ([]OwnHostname, error) {
	current, err := st.GetCurrentManifestRevision(ctx, a.TeamID, appID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // nothing saved yet: no routes
	}
	if err != nil {
		return nil, err
	}
	m, err := manifest.Decode(current.Manifest, "json")
	if err != nil {
		return nil, fmt.Errorf("decode saved revision %d: %w", current.Revision, err)
	}
	own, err := ownHostnames(m, envName, strings.TrimSpace(hostname))
	if err != nil || len(own) == 0 {
		return nil, err
	}
	envVars, err := editEnvironmentBlock(ctx, st, a, appID, envName, func(b *manifest.EnvironmentBlock) error {
		for _, o := range own {
			if err := editVariables(&b.Variables, VariableEdit{Name: o.Variable, Value: ptrValue(o.Hostname)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	expected := current.Revision
	_, err = EditManifest(ctx, st, a, enqueue, appID, &expected, func(m *manifest.Manifest) error {
		for _, o := range own {
			m.Spec.Routes[o.route].Hostname = "${{ vars." + o.Variable + " }}"
			if err := editVariables(&m.Spec.Variables, VariableEdit{Name: o.Variable, Value: ptrValue(o.Shared)}); err != nil {
				return err
			}
		}
		return envVars(m)
	}, false)
	if err != nil {
		return nil, err
	}
	return own, nil
}

// ownHostnames plans GiveOwnHostnames on the saved manifest m.
func ownHostnames(m *manifest.Manifest, envName, hostname string) ([]OwnHostname, error) {
	var literal []int
	for i, rt := range m.Spec.Routes {
		if !manifest.ContainsReference(rt.Hostname) {
			literal = append(literal, i)
		}
	}
	if len(literal) == 0 && hostname != "" {
		return nil, &InputError{Field: "hostname", Code: "hostname_unused", Message: "every route's hostname already references a variable: set the new environment's value of it instead"}
	}
	if hostname != "" && len(literal) > 1 {
		return nil, &InputError{Field: "hostname", Code: "hostname_ambiguous",
			Message: fmt.Sprintf("the manifest has %d routes with a literal hostname, so one hostname cannot say which it replaces: leave it empty to derive each, or set a variable per route", len(literal))}
	}
	taken := manifest.DeclaredVariables(m)
	out := make([]OwnHostname, 0, len(literal))
	for _, i := range literal {
		shared := m.Spec.Routes[i].Hostname
		own := hostname
		if own == "" {
			own = derivedHostname(shared, envName)
		}
		own = manifest.NormalizeHostname(own)
		field := fmt.Sprintf("spec.routes[%d].hostname", i)
		inputField := "hostname"
		if hostname == "" {
			inputField = field
		}
		if code, msg := manifest.CheckHostname(own); code != "" {
			return nil, &InputError{Field: inputField, Code: code, Message: "the hostname for " + envName + " " + msg}
		}
		if own == manifest.NormalizeHostname(shared) {
			return nil, &InputError{Field: inputField, Code: "hostname_conflict", Message: fmt.Sprintf("%s is the hostname the other environments serve: give %s another one", own, envName)}
		}
		name := "hostname"
		for n := 2; taken[name]; n++ {
			name = "hostname_" + strconv.Itoa(n)
		}
		taken[name] = true
		out = append(out, OwnHostname{Field: field, Variable: name, Shared: shared, Hostname: own, route: i})
	}
	return out, nil
}

// LiteralHostnames are the route hostnames of m that reference no
// variable: those GiveOwnHostnames gives a new environment its own of.
func LiteralHostnames(m *manifest.Manifest) []string {
	var out []string
	for _, rt := range m.Spec.Routes {
		if !manifest.ContainsReference(rt.Hostname) {
			out = append(out, rt.Hostname)
		}
	}
	return out
}

// derivedHostname is envName's variant of a literal hostname: the first
// label (after a wildcard's *.) gets -envName, so it stays one label deep
// below the same domain (notes.example.com: notes-staging.example.com).
func derivedHostname(shared, envName string) string {
	prefix, rest := "", shared
	if r, ok := strings.CutPrefix(shared, "*."); ok {
		prefix, rest = "*.", r
	}
	first, domain, _ := strings.Cut(rest, ".")
	if domain == "" {
		return prefix + first + "-" + envName
	}
	return prefix + first + "-" + envName + "." + domain
}

func ptrValue(s string) *manifest.Value {
	v := manifest.StringValue(s)
	return &v
}
