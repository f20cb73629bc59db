package secrets

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// Error codes.
const (
	CodeNameInvalid        = "name_invalid"
	CodeValueEmpty         = "secret_value_empty"
	CodeValueTooLarge      = "secret_value_too_large"
	CodeNameConflict       = "secret_name_conflict"
	CodeNotFound           = "secret_not_found"
	CodeGeneratedNotFound  = "generated_secret_not_found"
	CodeMissing            = "secret_missing"
	CodeAccessDenied       = "secret_access_denied"
	CodeEnvironmentUnknown = "environment_not_found"
	CodeGenerateInvalid    = "secret_generate_invalid"
	CodePinInvalid         = "secret_pin_invalid"
)

// MaxValueSize is Docker's limit on a Swarm secret (500 KiB): a larger
// value could be stored but never mounted.
const MaxValueSize = 500 * 1024

// Error is a refusal people can act on: a snake_case Code, a Message naming
// the secret (and environment) concerned, and the secret names involved.
type Error struct {
	Code    string
	Message string
	// Field is the request field at fault ("name", "value",
	// "environment_ids"), when there is one.
	Field string
	// Names lists every secret concerned, sorted (all the missing ones at
	// once, for secret_missing).
	Names []string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func refuse(code, field string, names []string, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Names: names, Message: fmt.Sprintf(format, args...)}
}

// Service is the secret store of every application, sealing values with a
// keyring. It is safe for concurrent use.
type Service struct {
	st *store.Store
	kr *keyring.Keyring
}

// Keyring is the keyring values are sealed with, for other sealed
// settings (backup targets' S3 keys).
func (s *Service) Keyring() *keyring.Keyring { return s.kr }

// New returns the service over st, sealing with kr.
func New(st *store.Store, kr *keyring.Keyring) *Service {
	return &Service{st: st, kr: kr}
}

// NewSource is New, named for its use as the deploy pipeline's
// pipeline.SecretSource.
func NewSource(st *store.Store, kr *keyring.Keyring) *Service { return New(st, kr) }

// WithStore returns the service running on st (a transaction's Store), so
// a secret change commits with whatever else the caller does.
func (s *Service) WithStore(st *store.Store) *Service { return &Service{st: st, kr: s.kr} }

var nameRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

func checkName(name string) error {
	if !nameRE.MatchString(name) {
		return refuse(CodeNameInvalid, "name", []string{name},
			"secret name %q must be 1-63 lowercase letters, digits and hyphens, starting with a letter and not ending with a hyphen", name)
	}
	return nil
}

// ad binds a sealed value to its row: kind, team, application, owner
// (secret id or environment id), name and version. A ciphertext copied to
// another row, even of the same team, does not open.
func ad(r store.SealedRef) []byte {
	owner := r.SecretID
	if r.Kind == store.SealedGenerated {
		owner = r.EnvironmentID
	}
	return keyring.AD(string(r.Kind), r.TeamID, r.ApplicationID, owner, r.Name, fmt.Sprint(r.Version))
}

func (s *Service) seal(plaintext []byte, r store.SealedRef) (store.Sealed, error) {
	sl, err := s.kr.Seal(plaintext, ad(r))
	if err != nil {
		return store.Sealed{}, err
	}
	return store.Sealed{KeyID: sl.KeyID, Nonce: sl.Nonce, Ciphertext: sl.Ciphertext}, nil
}

func (s *Service) open(r store.SealedRef, sealed store.Sealed) ([]byte, error) {
	return s.kr.Open(keyring.Sealed{KeyID: sealed.KeyID, Nonce: sealed.Nonce, Ciphertext: sealed.Ciphertext}, ad(r))
}

// Set stores value as a new version of the application's secret name,
// creating the secret (every environment, no previews) if needed. A name
// the application's saved manifest declares in spec.secrets is refused
// with secret_name_conflict: it is generated, never stored. actor is
// recorded as the version's author ("user:<id>", "token:<id>").
func (s *Service) Set(ctx context.Context, teamID, applicationID, name string, value []byte, actor string) (store.Secret, error) {
	if err := checkName(name); err != nil {
		return store.Secret{}, err
	}
	switch {
	case len(value) == 0:
		return store.Secret{}, refuse(CodeValueEmpty, "value", []string{name}, "secret %q: the value is empty", name)
	case len(value) > MaxValueSize:
		return store.Secret{}, refuse(CodeValueTooLarge, "value", []string{name},
			"secret %q: the value is %d bytes; Docker mounts at most %d", name, len(value), MaxValueSize)
	}
	declared, err := s.declaredNames(ctx, teamID, applicationID)
	if err != nil {
		return store.Secret{}, err
	}
	if declared[name] {
		return store.Secret{}, refuse(CodeNameConflict, "name", []string{name},
			"secret %q is declared in spec.secrets, so each environment generates its value; remove the declaration to store a value, or use another name", name)
	}
	var sec store.Secret
	err = s.st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		sec, err = tx.SetSecretValue(ctx, teamID, applicationID, name, actor, func(r store.SealedRef) (store.Sealed, error) {
			return s.seal(value, r)
		})
		if err != nil {
			return err
		}
		// A first version is a new stored secret, which counts.
		var added int64
		if sec.CurrentVersion == 1 {
			added = 1
		}
		err = quota.CheckCounts(ctx, tx, teamID, quota.Add{Quota: quota.Secrets, N: added, Field: "name"})
		var qe *quota.Error
		if errors.As(err, &qe) {
			return refuse(quota.Code, "name", []string{name}, "%s", qe.Error())
		}
		if err != nil {
			return err
		}
		return audit(ctx, tx, teamID, actor, "secret.set", sec, map[string]any{"version": sec.CurrentVersion})
	})
	if err != nil {
		return store.Secret{}, fmt.Errorf("set secret %q: %w", name, err)
	}
	return sec, nil
}

// audit records a change of a stored secret in the team's audit log, in
// the change's transaction: the secret's name and application, never its
// value.
func audit(ctx context.Context, tx *store.Store, teamID, actor, verb string, sec store.Secret, details map[string]any) error {
	if details == nil {
		details = map[string]any{}
	}
	details["name"] = sec.Name
	details["application_id"] = sec.ApplicationID
	_, err := tx.RecordEvent(ctx, teamID, store.EventParams{Actor: actor, Verb: verb, ObjectType: "secret", ObjectID: sec.ID, Details: details})
	return err
}

// declaredNames reads spec.secrets of the application's saved manifest;
// an application without one declares nothing.
func (s *Service) declaredNames(ctx context.Context, teamID, applicationID string) (map[string]bool, error) {
	m, _, err := savedmanifest.Current(ctx, s.st, teamID, applicationID)
	if err != nil || m == nil {
		// m is nil without a manifest or application: SetSecretValue tells which.
		return nil, err
	}
	out := make(map[string]bool, len(m.Spec.Secrets))
	for _, d := range m.Spec.Secrets {
		out[d.Name] = true
	}
	return out, nil
}

// List returns the application's stored secrets: metadata only.
func (s *Service) List(ctx context.Context, teamID, applicationID string) ([]store.Secret, error) {
	return s.st.ListSecrets(ctx, teamID, applicationID)
}

// Get returns one stored secret's metadata, by name.
func (s *Service) Get(ctx context.Context, teamID, applicationID, name string) (store.Secret, error) {
	sec, err := s.st.GetSecretByName(ctx, teamID, applicationID, name)
	if errors.Is(err, store.ErrNotFound) {
		return store.Secret{}, refuse(CodeNotFound, "name", []string{name}, "the application has no stored secret %q", name)
	}
	return sec, err
}

// Versions returns a stored secret's versions (numbers, key ids, authors
// and times), newest first.
func (s *Service) Versions(ctx context.Context, teamID, applicationID, name string) ([]store.SecretVersion, error) {
	sec, err := s.Get(ctx, teamID, applicationID, name)
	if err != nil {
		return nil, err
	}
	return s.st.ListSecretVersions(ctx, teamID, sec.ID)
}

// Delete deletes a stored secret. Deployments that pinned one of its
// versions keep running; new captures that mount it fail with
// secret_missing.
// actor ("user:<id>", "token:<id>") is recorded in the audit log.
func (s *Service) Delete(ctx context.Context, teamID, applicationID, name, actor string) error {
	sec, err := s.Get(ctx, teamID, applicationID, name)
	if err != nil {
		return err
	}
	return s.st.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.DeleteSecret(ctx, teamID, sec.ID); err != nil {
			return err
		}
		return audit(ctx, tx, teamID, actor, "secret.delete", sec, nil)
	})
}

// SetAccess replaces who may mount a stored secret. EnvironmentIDs must
// name environments (not previews) of the application; an unknown one is
// environment_not_found and changes nothing.
// actor is recorded in the audit log.
func (s *Service) SetAccess(ctx context.Context, teamID, applicationID, name string, a store.SecretAccess, actor string) (store.Secret, error) {
	sec, err := s.Get(ctx, teamID, applicationID, name)
	if err != nil {
		return store.Secret{}, err
	}
	if a.AllEnvironments {
		a.EnvironmentIDs = nil
	}
	var out store.Secret
	err = s.st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if out, err = tx.SetSecretAccess(ctx, teamID, sec.ID, a); err != nil {
			return err
		}
		return audit(ctx, tx, teamID, actor, "secret.access", out, map[string]any{
			"all_environments": out.AllEnvironments, "environment_ids": out.EnvironmentIDs, "previews": out.Previews})
	})
	if errors.Is(err, store.ErrNotFound) && len(a.EnvironmentIDs) > 0 {
		return store.Secret{}, refuse(CodeEnvironmentUnknown, "environment_ids", []string{name},
			"secret %q: environment_ids lists %s; every id must be an environment (not a preview) of this application",
			name, strings.Join(a.EnvironmentIDs, ", "))
	}
	return out, err
}

// Allows tells whether sec's access list lets env mount it: previews only
// with the previews flag ("every environment" never includes previews) and
// never untrusted ones (pull requests from forks), environments when every
// environment is granted or theirs is listed.
func Allows(sec store.Secret, env store.Environment) bool {
	if env.Kind == store.KindPreview {
		return sec.Previews && !env.Untrusted
	}
	if sec.AllEnvironments {
		return true
	}
	return slices.Contains(sec.EnvironmentIDs, env.ID)
}

// Generated lists an environment's (or preview's) generated values:
// metadata only.
func (s *Service) Generated(ctx context.Context, teamID, environmentID string) ([]store.GeneratedSecret, error) {
	return s.st.ListGeneratedSecrets(ctx, teamID, environmentID)
}

// Regenerate asks the environment's next deployment to generate a new
// value for name; running deployments keep theirs. A name the environment
// has no value for yet is generated_secret_not_found: its first deployment
// that mounts it generates one anyway.
func (s *Service) Regenerate(ctx context.Context, teamID, environmentID, name string) (store.GeneratedSecret, error) {
	g, err := s.st.RequestSecretRegeneration(ctx, teamID, environmentID, name)
	if errors.Is(err, store.ErrNotFound) {
		return store.GeneratedSecret{}, refuse(CodeGeneratedNotFound, "name", []string{name},
			"the environment has no generated value for %q yet; its first deployment that mounts it generates one", name)
	}
	return g, err
}
