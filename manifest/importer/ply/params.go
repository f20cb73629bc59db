package ply

import (
	"errors"
	"fmt"
	"strings"

	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
)

// param is one value in a ply params namespace, as final native text
// (escaped, possibly holding variable references). A secret param is a
// Slipway secret (generated or stored) and can only reach a service as a
// file.
type param struct {
	value  string
	secret string // native secret name when the param is secret
}

// Names ply reserves in every params namespace: the built-in facts, and the
// live values the runtime publishes after launch.
var (
	facts = map[string]bool{"name": true, "version": true, "host": true, "port": true, "addr": true,
		"base_url": true, "scale": true, "arch": true, "image": true}
	live = map[string]bool{"state": true, "instances": true, "started_at": true, "restarts": true}
)

// Why a hole does not resolve.
var (
	errCycle = errors.New("reads itself through other params")
)

type unknownParam struct{ name string }

func (e unknownParam) Error() string {
	return fmt.Sprintf("{%s} is not a declared param", e.name)
}

type liveParam struct{ name string }

func (e liveParam) Error() string {
	return fmt.Sprintf("{%s} is a live value, which changes after launch and cannot be baked into env", e.name)
}

type unavailableFact struct{ name, why string }

func (e unavailableFact) Error() string {
	return fmt.Sprintf("{%s} is not available here: %s", e.name, e.why)
}

type secretInside struct{ name string }

func (e secretInside) Error() string {
	return fmt.Sprintf("{%s} is a secret inside a longer value: Slipway never puts secrets in the environment, so read it from its file instead", e.name)
}

// namespace is one app's or member's params: declared values and secrets,
// computed params resolved when read, and the built-in facts it has.
type namespace struct {
	declared map[string]param
	computed map[string]string // raw templates with {holes}
	facts    map[string]param
	// missing says why a fact this namespace lacks is not available.
	missing map[string]string
	state   map[string]int // computed params being (1) or done (2) resolving
}

func newNamespace() *namespace {
	return &namespace{declared: map[string]param{}, computed: map[string]string{}, facts: map[string]param{},
		missing: map[string]string{}, state: map[string]int{}}
}

// get returns a param's value, resolving a computed one on first read.
func (ns *namespace) get(name string) (param, error) {
	if p, ok := ns.declared[name]; ok {
		return p, nil
	}
	if tmpl, ok := ns.computed[name]; ok {
		if ns.state[name] == 1 {
			return param{}, errCycle
		}
		ns.state[name] = 1
		x := expander{holes: true, lookup: func(ref string) (param, error) {
			if strings.Contains(ref, ".") {
				return param{}, unknownParam{ref}
			}
			return ns.get(ref)
		}}
		p, err := x.expand(tmpl)
		delete(ns.state, name)
		if err != nil {
			return param{}, err
		}
		ns.declared[name] = p
		delete(ns.computed, name)
		return p, nil
	}
	if p, ok := ns.facts[name]; ok {
		return p, nil
	}
	switch {
	case live[name]:
		return param{}, liveParam{name}
	case facts[name]:
		why := ns.missing[name]
		if why == "" {
			why = "Slipway has no such value to give"
		}
		return param{}, unavailableFact{name, why}
	}
	return param{}, unknownParam{name}
}

// expander rewrites one ply value: {param} holes (when holes are on) and
// $VAR or ${VAR} deploy-time variables (when vars is set), with {{, }} and
// $$ as escapes. Literal text is escaped for Slipway; variables become
// ${{ vars.NAME }} references.
type expander struct {
	holes  bool
	lookup func(ref string) (param, error)
	vars   *convert.Vars
	at     string // source path, for the variables' diagnostics
}

// expand returns the native text, or the secret a value made of exactly one
// secret hole names.
func (x expander) expand(s string) (param, error) {
	var b strings.Builder
	var lit strings.Builder
	flush := func() {
		b.WriteString(convert.EscapeRefs(lit.String()))
		lit.Reset()
	}
	query := false // the last hole's value carries a ?query
	valueAt := 0   // where in b the last hole's value starts
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case x.holes && strings.HasPrefix(s[i:], "{{"):
			lit.WriteByte('{')
			i += 2
		case x.holes && strings.HasPrefix(s[i:], "}}"):
			lit.WriteByte('}')
			i += 2
		case x.holes && c == '{':
			end := holeEnd(s[i+1:])
			if end < 0 {
				lit.WriteByte(c)
				i++
				continue
			}
			ref := s[i+1 : i+1+end]
			p, err := x.lookup(ref)
			if err != nil {
				return param{}, err
			}
			if p.secret != "" {
				if i == 0 && i+end+2 == len(s) {
					return p, nil
				}
				return param{}, secretInside{ref}
			}
			flush()
			valueAt = b.Len()
			b.WriteString(p.value)
			query = strings.Contains(p.value, "?")
			i += end + 2
			continue
		case x.vars != nil && c == '$':
			name, n := dollarVar(s[i:])
			switch {
			case n == 0:
				lit.WriteByte('$')
				i++
			case name == "":
				lit.WriteByte('$') // $$
				i += n
			default:
				flush()
				b.WriteString(x.vars.Ref(x.at, name, nil))
				i += n
			}
		case c == '?' && query && lit.Len() == 0:
			// {db.url}?sslmode=... joins the query the value already has;
			// a parameter written here replaces the value's own.
			written := b.String()
			joined := joinQuery(written[valueAt:], s[i+1:i+1+strings.IndexAny(s[i+1:]+"{", "{$#")])
			b.Reset()
			b.WriteString(written[:valueAt] + joined)
			if strings.Contains(joined, "?") {
				lit.WriteByte('&')
			} else {
				lit.WriteByte('?')
			}
			i++
		default:
			lit.WriteByte(c)
			i++
		}
		query = false
	}
	flush()
	return param{value: b.String()}, nil
}

// joinQuery drops from url's query the parameters query sets.
func joinQuery(url, query string) string {
	base, q, _ := strings.Cut(url, "?")
	set := map[string]bool{}
	for _, kv := range strings.Split(query, "&") {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	var kept []string
	for _, kv := range strings.Split(q, "&") {
		if k, _, _ := strings.Cut(kv, "="); kv != "" && !set[k] {
			kept = append(kept, kv)
		}
	}
	if len(kept) == 0 {
		return base
	}
	return base + "?" + strings.Join(kept, "&")
}

// holeEnd returns the length of the ident of a hole starting after its
// "{", or -1 when s does not continue as one.
func holeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '}':
			if i == 0 {
				return -1
			}
			return i
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return -1
		}
	}
	return -1
}

// dollarVar reads $NAME, ${NAME} or $$ at the start of s: the name ("" for
// $$) and the bytes it spans, or 0 when the $ starts no variable.
func dollarVar(s string) (string, int) {
	if strings.HasPrefix(s, "$$") {
		return "", 2
	}
	if strings.HasPrefix(s, "${") {
		end := strings.IndexByte(s, '}')
		if end < 0 || !isVarName(s[2:end]) {
			return "", 0
		}
		return s[2:end], end + 1
	}
	n := 1
	for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] == '_' || n > 1 && s[n] >= '0' && s[n] <= '9') {
		n++
	}
	if n == 1 {
		return "", 0
	}
	return s[1:n], n
}

func isVarName(s string) bool {
	_, n := dollarVar("$" + s)
	return s != "" && n == len(s)+1
}

// holeRefs lists the {refs} of a template, escapes excluded.
func holeRefs(s string) []string {
	var refs []string
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "{{"), strings.HasPrefix(s[i:], "}}"):
			i += 2
		case s[i] == '{':
			if end := holeEnd(s[i+1:]); end >= 0 {
				refs = append(refs, s[i+1:i+1+end])
				i += end + 2
				continue
			}
			i++
		default:
			i++
		}
	}
	return refs
}

// checkComputed reports the computed params ply itself refuses: holes that
// name another app, a live value or nothing declared, and cycles. A hole
// that reads a secret or a fact this import cannot give is only an error
// where an environment value reads it.
func checkComputed(p *convert.Obj, ns *namespace) {
	bad := map[string]string{}
	for _, k := range convert.SortedKeys(ns.computed) {
		for _, ref := range holeRefs(ns.computed[k]) {
			_, declared := ns.declared[ref]
			_, comp := ns.computed[ref]
			switch {
			case strings.Contains(ref, "."):
				bad[k] = fmt.Sprintf("{%s}: a manifest can only reference its own params", ref)
			case live[ref]:
				bad[k] = liveParam{ref}.Error()
			case !declared && !comp && !facts[ref]:
				bad[k] = unknownParam{ref}.Error()
			}
		}
	}
	// Cycles among the computed params, walked without recursion.
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	for _, start := range convert.SortedKeys(ns.computed) {
		if state[start] != 0 {
			continue
		}
		type frame struct {
			name string
			refs []string
		}
		stack := []frame{{start, holeRefs(ns.computed[start])}}
		state[start] = visiting
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.refs) == 0 {
				state[top.name] = done
				stack = stack[:len(stack)-1]
				continue
			}
			next := top.refs[0]
			top.refs = top.refs[1:]
			if _, comp := ns.computed[next]; !comp {
				continue
			}
			switch state[next] {
			case visiting:
				in := false
				for _, f := range stack {
					in = in || f.name == next
					if in {
						bad[f.name] = errCycle.Error()
					}
				}
			case 0:
				state[next] = visiting
				stack = append(stack, frame{next, holeRefs(ns.computed[next])})
			}
		}
	}
	for _, k := range convert.SortedKeys(bad) {
		p.Error(k, "the computed param cannot be resolved: %s", bad[k])
	}
}
