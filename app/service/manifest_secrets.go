package service

import (
	"context"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// ValidateStoredSecretNames validates m again knowing the application's
// stored secret names, which DecodeManifest cannot: a spec.secrets
// declaration that reuses a stored name (secret_name_conflict) is refused
// when the manifest is saved rather than when a deployment mounts it.
// Only names are read; no value is opened.
func ValidateStoredSecretNames(ctx context.Context, st *store.Store, teamID, applicationID string, m *manifest.Manifest, data []byte, format string) error {
	if len(m.Spec.Secrets) == 0 {
		return nil
	}
	list, err := st.ListSecrets(ctx, teamID, applicationID)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return nil
	}
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.Name
	}
	errs := manifest.Validate(m, manifest.ValidateOptions{StoredSecretNames: names})
	if len(errs) == 0 {
		return nil
	}
	if format == "" || format == "toml" {
		errs = errs.WithPositions(manifest.Positions(data))
	}
	return &ManifestError{Errors: errs}
}
