package secrets

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// CodeVersionUnavailable: a pinned version no longer exists (its secret or
// environment was purged), so the deployment cannot be repeated exactly.
const CodeVersionUnavailable = "secret_version_unavailable"

// pinGenerated prefixes the pins of generated values; stored values are
// pinned as "<secret id>@<version>", so a secret deleted and set again
// under the same name is never confused with the one a deployment pinned.
const pinGenerated = "generated"

// Pin is a pinned version, as Capture returns and Values reads it.
type Pin struct {
	Generated bool
	SecretID  string // stored values
	Version   int
}

func (p Pin) String() string {
	if p.Generated {
		return pinGenerated + "@" + strconv.Itoa(p.Version)
	}
	return p.SecretID + "@" + strconv.Itoa(p.Version)
}

// ParsePin reads a pin written by Pin.String.
func ParsePin(s string) (Pin, error) {
	owner, v, ok := strings.Cut(s, "@")
	n, err := strconv.Atoi(v)
	if !ok || err != nil || n <= 0 || owner == "" {
		return Pin{}, refuse(CodePinInvalid, "", nil, "pinned secret version %q is not <secret id>@<n> or generated@<n>", s)
	}
	if owner == pinGenerated {
		return Pin{Generated: true, Version: n}, nil
	}
	return Pin{SecretID: owner, Version: n}, nil
}

// Mounted returns the rendered secret names m's services and jobs mount,
// sorted and without duplicates.
func Mounted(m *manifest.Manifest) []string {
	seen := map[string]bool{}
	var names []string
	add := func(mounts []manifest.SecretMount) {
		for _, sm := range mounts {
			if !seen[sm.Name] {
				seen[sm.Name] = true
				names = append(names, sm.Name)
			}
		}
	}
	for _, s := range m.Spec.Services {
		add(s.Secrets)
	}
	for _, j := range m.Spec.Jobs {
		add(j.Secrets)
	}
	sort.Strings(names)
	return names
}

// Check tells whether env could mount every secret the rendered manifest
// m mounts, changing nothing: a name both declared and stored is
// secret_name_conflict, a stored name without a value secret_missing (all
// of them at once), one whose access list excludes env
// secret_access_denied. Declared names always pass: Capture generates
// them. Plans and promotion checks call it; Capture calls it first.
func (s *Service) Check(ctx context.Context, teamID string, env store.Environment, m *manifest.Manifest) error {
	_, err := s.check(ctx, teamID, env, m)
	return err
}

// assessment sorts the names a rendered manifest mounts in an environment.
type assessment struct {
	used                      map[string]store.Secret // stored names that may be mounted
	conflict, missing, denied []string                // sorted
}

func (s *Service) assess(ctx context.Context, teamID string, env store.Environment, m *manifest.Manifest) (assessment, error) {
	declared := declarations(m)
	list, err := s.st.ListSecrets(ctx, teamID, env.ApplicationID)
	if err != nil {
		return assessment{}, err
	}
	stored := make(map[string]store.Secret, len(list))
	for _, sec := range list {
		stored[sec.Name] = sec
	}
	a := assessment{used: map[string]store.Secret{}}
	for _, name := range Mounted(m) {
		sec, isStored := stored[name]
		_, isDeclared := declared[name]
		switch {
		case isDeclared && isStored:
			a.conflict = append(a.conflict, name)
		case isDeclared:
		case !isStored || sec.CurrentVersion == 0:
			a.missing = append(a.missing, name)
		case !Allows(sec, env):
			a.denied = append(a.denied, name)
		default:
			a.used[name] = sec
		}
	}
	return a, nil
}

// check returns the stored secrets m mounts, by name, when all is well,
// and otherwise the first refusal: conflicts, then missing, then denied.
func (s *Service) check(ctx context.Context, teamID string, env store.Environment, m *manifest.Manifest) (map[string]store.Secret, error) {
	a, err := s.assess(ctx, teamID, env, m)
	if err != nil {
		return nil, err
	}
	if p := a.problems(env); len(p) > 0 {
		return nil, p[0].err
	}
	return a.used, nil
}

// Problem is one kind of refusal for a rendered manifest in an
// environment, with every secret it concerns.
type Problem struct {
	Code  string   // secret_name_conflict, secret_missing or secret_access_denied
	Names []string // sorted
	err   *Error
}

// Refusal is the problem as an error, with a message naming the
// environment and secrets and saying what to do.
func (p Problem) Refusal() *Error { return p.err }

func (a assessment) problems(env store.Environment) []Problem {
	var out []Problem
	add := func(names []string, e *Error) {
		if len(names) > 0 {
			out = append(out, Problem{Code: e.Code, Names: names, err: e})
		}
	}
	add(a.conflict, refuse(CodeNameConflict, "", a.conflict,
		"%s: declared in spec.secrets and also stored; a name is either generated or stored: rename the declaration or delete the stored secret",
		quoteList(a.conflict)))
	add(a.missing, refuse(CodeMissing, "", a.missing,
		"no stored value for %s, mounted by %s %q: set them with `slipway app secret set`", quoteList(a.missing), kindWord(env), env.Name))
	how := "add the environment to their access lists"
	switch {
	case env.Kind == store.KindPreview && env.Untrusted:
		how = "previews of pull requests from forks never mount stored secrets"
	case env.Kind == store.KindPreview:
		how = "allow previews in their access lists"
	}
	add(a.denied, refuse(CodeAccessDenied, "", a.denied,
		"%s %q may not mount %s: %s", kindWord(env), env.Name, quoteList(a.denied), how))
	return out
}

// Problems lists every reason env cannot mount what the rendered manifest
// m mounts, all at once (for promotion plans and secrets_unavailable),
// changing nothing. Empty means Capture would succeed as far as stored
// secrets go.
func (s *Service) Problems(ctx context.Context, teamID string, env store.Environment, m *manifest.Manifest) ([]Problem, error) {
	a, err := s.assess(ctx, teamID, env, m)
	if err != nil {
		return nil, err
	}
	return a.problems(env), nil
}

func declarations(m *manifest.Manifest) map[string]manifest.SecretDeclaration {
	out := make(map[string]manifest.SecretDeclaration, len(m.Spec.Secrets))
	for _, d := range m.Spec.Secrets {
		out[d.Name] = d
	}
	return out
}

func kindWord(env store.Environment) string {
	if env.Kind == store.KindPreview {
		return "preview"
	}
	return "environment"
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// Capture pins a version of every secret the rendered manifest m mounts in
// env and returns name -> pin (see Pin). Stored names pin their current
// version, after Check's refusals; declared names pin the environment's
// generated value, generating it first when the environment has none or a
// regenerate was requested. Stored checks run before anything is
// generated, so a refused capture generates nothing.
func (s *Service) Capture(ctx context.Context, teamID string, env store.Environment, m *manifest.Manifest) (map[string]string, error) {
	used, err := s.check(ctx, teamID, env, m)
	if err != nil {
		return nil, err
	}
	pins := make(map[string]string, len(used))
	for name, sec := range used {
		pins[name] = Pin{SecretID: sec.ID, Version: sec.CurrentVersion}.String()
	}
	declared := declarations(m)
	for _, name := range Mounted(m) {
		d, ok := declared[name]
		if !ok {
			continue
		}
		version, _, err := s.st.EnsureGeneratedSecret(ctx, teamID, env.ID, name, "capture", func(r store.SealedRef) (store.Sealed, error) {
			value, err := Generate(d.Generate)
			if err != nil {
				return store.Sealed{}, err
			}
			return s.seal(value, r)
		})
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Names = []string{name}
				e.Message = fmt.Sprintf("spec.secrets %q: %s", name, e.Message)
				return nil, e
			}
			return nil, fmt.Errorf("generate secret %q for %s: %w", name, env.Name, err)
		}
		pins[name] = Pin{Generated: true, Version: version}.String()
	}
	return pins, nil
}

// Values opens the pinned versions for env: the only way a value leaves
// the store, for the worker to hand to Swarm. A version that no longer
// exists is secret_version_unavailable; one sealed under a key the
// keyring lacks, or that does not authenticate, keeps the keyring's code
// (secret_key_unknown, secret_decrypt_failed).
func (s *Service) Values(ctx context.Context, teamID string, env store.Environment, pinned map[string]string) (map[string]swarm.SecretValue, error) {
	out := make(map[string]swarm.SecretValue, len(pinned))
	for name, raw := range pinned {
		pin, err := ParsePin(raw)
		if err != nil {
			return nil, err
		}
		var ref store.SealedRef
		var sealed store.Sealed
		if pin.Generated {
			ref, sealed, err = s.st.GeneratedSecretCiphertext(ctx, teamID, env.ID, name, pin.Version)
		} else {
			ref, sealed, err = s.st.SecretCiphertext(ctx, teamID, env.ApplicationID, pin.SecretID, pin.Version)
			if err == nil && ref.Name != name {
				// A pin is for one name: anything else is a corrupted capture.
				err = store.ErrNotFound
			}
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil, refuse(CodeVersionUnavailable, "", []string{name},
				"secret %q version %s pinned by the deployment no longer exists in %s %q", name, raw, kindWord(env), env.Name)
		}
		if err != nil {
			return nil, err
		}
		value, err := s.open(ref, sealed)
		if err != nil {
			var ke *keyring.Error
			if errors.As(err, &ke) {
				return nil, refuse(ke.Code, "", []string{name}, "secret %q version %s: %s", name, raw, ke.Message)
			}
			return nil, err
		}
		out[name] = swarm.SecretValue{Value: value, Version: raw}
	}
	return out, nil
}

// RotateKey re-seals every stored and generated value and every registry
// password, of every team, that is not sealed under the keyring's current key, and returns how many it
// re-sealed. The keyring must still hold the old keys (see keyring.Parse);
// once it returns, they are no longer needed.
func (s *Service) RotateKey(ctx context.Context) (int, error) {
	return s.st.ResealAll(ctx, s.kr.CurrentID(), func(r store.SealedRef, old store.Sealed) (store.Sealed, error) {
		value, err := s.open(r, old)
		if err != nil {
			return store.Sealed{}, fmt.Errorf("open %s secret %q version %d of team %s: %w", r.Kind, r.Name, r.Version, r.TeamID, err)
		}
		return s.seal(value, r)
	})
}
