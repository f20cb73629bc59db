package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// EditManifest changes one part of the application's saved manifest: it
// loads the current revision, applies edit to it, validates the whole
// result (a *ManifestError saves nothing), saves it as a new revision based
// on the one it loaded, and converges environments as an apply does;
// deploy requests a deployment of every environment that builds. With
// expectedRevision, or when another save lands between the load and the
// save, it fails with generation_conflict. An edit that changes nothing
// saves nothing and reports Unchanged. edit's own error is returned as is.
func EditManifest(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID string, expectedRevision *int64, edit func(*manifest.Manifest) error, deploy bool) (ApplyResult, error) {
	return editManifest(ctx, st, a, enqueue, appID, expectedRevision, edit, deploy, false)
}

// editManifest is EditManifest; renaming lets the edit change
// metadata.name, which only RenameApplication does.
func editManifest(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID string, expectedRevision *int64, edit func(*manifest.Manifest) error, deploy, renaming bool) (ApplyResult, error) {
	var res ApplyResult
	err := st.WithTx(ctx, func(tx *store.Store) error {
		app, err := tx.GetApplication(ctx, a.TeamID, appID)
		if err != nil {
			return err
		}
		res.Application = app
		current, err := tx.GetCurrentManifestRevision(ctx, a.TeamID, app.ID)
		if errors.Is(err, store.ErrNotFound) {
			return &InputError{Field: "application", Code: "manifest_missing", Message: "the application has no saved manifest yet: apply one first"}
		}
		if err != nil {
			return err
		}
		if expectedRevision != nil && *expectedRevision != current.Revision {
			return generationConflict(current.Revision, *expectedRevision)
		}
		previous, err := manifest.Decode(current.Manifest, "json")
		if err != nil {
			return fmt.Errorf("decode saved revision %d: %w", current.Revision, err)
		}
		m, err := manifest.Decode(current.Manifest, "json")
		if err != nil {
			return fmt.Errorf("decode saved revision %d: %w", current.Revision, err)
		}
		if err := edit(m); err != nil {
			return err
		}
		if m.Metadata.Name != previous.Metadata.Name && !renaming {
			return &InputError{Field: "metadata.name", Code: "application_rename_unsupported",
				Message: "a field edit cannot rename the application"}
		}
		if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
			return &ManifestError{Errors: errs}
		}
		// A declaration reusing a stored secret's name is refused as apply refuses it.
		if err := ValidateStoredSecretNames(ctx, tx, a.TeamID, app.ID, m, nil, "json"); err != nil {
			return err
		}
		res.Warnings = manifest.Warnings(m)
		normalized, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("encode manifest: %w", err)
		}
		res.Revision = current
		if sameJSON(current.Manifest, normalized) {
			res.Unchanged = true
		} else {
			// The saved source keeps the format (and, for TOML, the
			// comments and layout) the author wrote it in.
			source, format, err := editedSource(current, m, normalized)
			if err != nil {
				return err
			}
			base := current.Revision
			rev, err := tx.CreateManifestRevision(ctx, a.TeamID, app.ID, store.RevisionParams{
				Manifest: normalized, Source: source, SourceFormat: format, Author: a.String(), BaseRevision: &base,
			})
			var c *store.ConflictError
			if errors.As(err, &c) {
				return &InputError{Field: "expected_revision", Code: "generation_conflict", Message: "another revision was saved meanwhile: reload and edit again"}
			}
			if err != nil {
				return err
			}
			res.Revision = rev
			if err := record(ctx, tx, a, "manifest.edit", "application", app.ID, map[string]any{"revision": rev.Revision}); err != nil {
				return err
			}
		}
		if err := afterSave(ctx, tx, a, enqueue, app, previous, m, deploy, &res); err != nil {
			return err
		}
		// As apply does: an edit of one environment's variable may change
		// what its rendered manifest warns about.
		envWarnings, err := PlanWarnings(ctx, tx, a.TeamID, app.ID, m)
		res.Warnings = append(res.Warnings, envWarnings...)
		return err
	})
	return res, err
}

func generationConflict(current, expected int64) error {
	return &InputError{Field: "expected_revision", Code: "generation_conflict",
		Message: fmt.Sprintf("revision %d was saved since revision %d: reload, merge and save again", current, expected)}
}

// VariableEdit sets (Value non-nil) or removes one variable, of the
// application or, with Environment, of one environment.
type VariableEdit struct {
	Name        string
	Environment string
	Value       *manifest.Value
}

// EditVariable returns the edit for EditManifest after checking that the
// environment, when named, exists (environment_unknown otherwise).
func EditVariable(ctx context.Context, st *store.Store, a Actor, appID string, v VariableEdit) (func(*manifest.Manifest) error, error) {
	if v.Environment == "" {
		return func(m *manifest.Manifest) error { return editVariables(&m.Spec.Variables, v) }, nil
	}
	return editEnvironmentBlock(ctx, st, a, appID, v.Environment, func(b *manifest.EnvironmentBlock) error {
		return editVariables(&b.Variables, v)
	})
}

func editVariables(vars *map[string]manifest.Value, v VariableEdit) error {
	if v.Value == nil {
		if _, ok := (*vars)[v.Name]; !ok {
			return &InputError{Field: "name", Code: "variable_unknown", Message: fmt.Sprintf("variable %q is not set there", v.Name)}
		}
		delete(*vars, v.Name)
		if len(*vars) == 0 {
			*vars = nil
		}
		return nil
	}
	if *vars == nil {
		*vars = map[string]manifest.Value{}
	}
	(*vars)[v.Name] = *v.Value
	return nil
}

// ServiceEdit changes settings of one service; nil fields stay as they
// are. In Environment, a nil value removes the key.
type ServiceEdit struct {
	Replicas    *int64
	Image       *string
	Environment map[string]*string
}

// EditService returns the edit of the named service.
func EditService(name string, e ServiceEdit) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		s, err := findService(m, name)
		if err != nil {
			return err
		}
		if e.Replicas != nil {
			s.Replicas = manifest.NewInt(*e.Replicas)
		}
		if e.Image != nil {
			if s.Source.Type != manifest.SourceImage {
				return &InputError{Field: "image", Code: "service_not_image",
					Message: fmt.Sprintf("service %s is built from Git; only image services take an image", name)}
			}
			s.Source.Image = *e.Image
		}
		for k, v := range e.Environment {
			if v == nil {
				delete(s.Environment, k)
				continue
			}
			if s.Environment == nil {
				s.Environment = map[string]string{}
			}
			s.Environment[k] = *v
		}
		if len(s.Environment) == 0 {
			s.Environment = nil
		}
		return nil
	}
}

// RenameService returns the edit renaming a service and repointing what
// names it: other services' depends_on, jobs, routes and exports.
func RenameService(from, to string) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		s, err := findService(m, from)
		if err != nil {
			return err
		}
		if from == to {
			return nil
		}
		if _, err := findService(m, to); err == nil {
			return &InputError{Field: "name", Code: "service_name_taken", Message: fmt.Sprintf("the application already has a service %s", to)}
		}
		s.Name = to
		for i := range m.Spec.Services {
			deps := m.Spec.Services[i].DependsOn
			if j := slices.Index(deps, from); j >= 0 {
				deps[j] = to
			}
		}
		for i := range m.Spec.Jobs {
			if m.Spec.Jobs[i].Service == from {
				m.Spec.Jobs[i].Service = to
			}
		}
		for i := range m.Spec.Routes {
			if m.Spec.Routes[i].Service == from {
				m.Spec.Routes[i].Service = to
			}
		}
		for i := range m.Spec.Exports {
			if m.Spec.Exports[i].Service == from {
				m.Spec.Exports[i].Service = to
			}
		}
		return nil
	}
}

func findService(m *manifest.Manifest, name string) (*manifest.Service, error) {
	for i := range m.Spec.Services {
		if m.Spec.Services[i].Name == name {
			return &m.Spec.Services[i], nil
		}
	}
	return nil, &InputError{Field: "service", Code: "service_unknown", Message: fmt.Sprintf("the manifest has no service %q", name)}
}
