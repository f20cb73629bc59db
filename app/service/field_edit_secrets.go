package service

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// Field edits of generated-secret declarations (spec.secrets). Values are
// never touched: an environment keeps the value it generated when its
// declaration changes or goes, as the specification says.

// DeclareSecret returns the edit declaring a generated secret, or
// replacing the declaration of that name.
func DeclareSecret(d manifest.SecretDeclaration) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		if i := slices.IndexFunc(m.Spec.Secrets, func(x manifest.SecretDeclaration) bool { return x.Name == d.Name }); i >= 0 {
			m.Spec.Secrets[i] = d
			return nil
		}
		m.Spec.Secrets = append(m.Spec.Secrets, d)
		return nil
	}
}

// UndeclareSecret returns the edit removing the named declaration. While a
// service or job still mounts the name it is refused with a secret_mounted
// error on each mount's path: the mount would silently turn into one of a
// stored secret that has no value. A mount whose name is a ${{ }}
// reference counts when it renders to the name for any of the
// application's environments or previews.
func UndeclareSecret(ctx context.Context, st *store.Store, a Actor, appID, name string) (func(*manifest.Manifest) error, error) {
	mounted, err := secretMountChecker(ctx, st, a, appID)
	if err != nil {
		return nil, err
	}
	return func(m *manifest.Manifest) error {
		if !slices.ContainsFunc(m.Spec.Secrets, func(x manifest.SecretDeclaration) bool { return x.Name == name }) {
			return &InputError{Field: "name", Code: "secret_declaration_unknown", Message: fmt.Sprintf("the manifest declares no generated secret %q", name)}
		}
		rest := slices.DeleteFunc(slices.Clone(m.Spec.Secrets), func(x manifest.SecretDeclaration) bool { return x.Name == name })
		return replaceDeclarations(m, rest, mounted)
	}, nil
}

// ReplaceSecretDeclarations returns the edit replacing every declaration
// with list. A declaration it drops that a service or job still mounts is
// refused as UndeclareSecret refuses it, naming every such mount at once.
func ReplaceSecretDeclarations(ctx context.Context, st *store.Store, a Actor, appID string, list []manifest.SecretDeclaration) (func(*manifest.Manifest) error, error) {
	mounted, err := secretMountChecker(ctx, st, a, appID)
	if err != nil {
		return nil, err
	}
	return func(m *manifest.Manifest) error { return replaceDeclarations(m, list, mounted) }, nil
}

func replaceDeclarations(m *manifest.Manifest, list []manifest.SecretDeclaration, mounted func(*manifest.Manifest, string) manifest.Errors) error {
	var errs manifest.Errors
	for _, d := range m.Spec.Secrets {
		if !slices.ContainsFunc(list, func(x manifest.SecretDeclaration) bool { return x.Name == d.Name }) {
			errs = append(errs, mounted(m, d.Name)...)
		}
	}
	if len(errs) > 0 {
		return &ManifestError{Errors: errs}
	}
	m.Spec.Secrets = list
	if len(list) == 0 {
		m.Spec.Secrets = nil
	}
	return nil
}

// secretMountChecker loads the application's environments and previews and
// returns a function listing, as field errors, every service and job mount
// of a secret name in a manifest: as written, or as a referencing name
// renders for one of them.
func secretMountChecker(ctx context.Context, st *store.Store, a Actor, appID string) (func(*manifest.Manifest, string) manifest.Errors, error) {
	envs, err := st.ListEnvironments(ctx, a.TeamID, appID)
	if err != nil {
		return nil, err
	}
	return func(m *manifest.Manifest, name string) manifest.Errors {
		var renders []*manifest.Manifest
		if manifestMountsReference(m) {
			for _, e := range envs {
				rc := planRenderContext(m, "", e)
				// Fields that fail to render keep their text, so a
				// partly rendered manifest still answers for the rest.
				if r, _ := manifest.Render(m, rc); r != nil {
					renders = append(renders, r)
				}
			}
		}
		var errs manifest.Errors
		check := func(owner, path string, mounts func(*manifest.Manifest) []manifest.SecretMount) {
			for i, s := range mounts(m) {
				hit := s.Name == name
				for _, r := range renders {
					rendered := mounts(r)
					hit = hit || (i < len(rendered) && rendered[i].Name == name)
				}
				if hit {
					errs = append(errs, manifest.FieldError{Path: fmt.Sprintf("%s.secrets[%d].name", path, i), Code: "secret_mounted",
						Message: fmt.Sprintf("%s mounts generated secret %s at %s: remove the mount first", owner, name, s.Target)})
				}
			}
		}
		for i, s := range m.Spec.Services {
			check("service "+s.Name, fmt.Sprintf("spec.services[%d]", i), func(x *manifest.Manifest) []manifest.SecretMount { return x.Spec.Services[i].Secrets })
		}
		for i, j := range m.Spec.Jobs {
			check("job "+j.Name, fmt.Sprintf("spec.jobs[%d]", i), func(x *manifest.Manifest) []manifest.SecretMount { return x.Spec.Jobs[i].Secrets })
		}
		return errs
	}, nil
}

// manifestMountsReference reports whether any service or job mounts a
// secret by a ${{ }} name, the only case that needs rendering.
func manifestMountsReference(m *manifest.Manifest) bool {
	var mounts []manifest.SecretMount
	for _, s := range m.Spec.Services {
		mounts = append(mounts, s.Secrets...)
	}
	for _, j := range m.Spec.Jobs {
		mounts = append(mounts, j.Secrets...)
	}
	return slices.ContainsFunc(mounts, func(s manifest.SecretMount) bool { return strings.Contains(s.Name, "${{") })
}
