package service

import (
	"encoding/json"
	"fmt"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/manifest/tomledit"
	"github.com/slipwayhq/slipway/store"
)

// editedSource is the document a field edit saves, in the format the
// current revision was written in. A TOML document is changed in place
// (tomledit), keeping its comments and layout; should that not give back
// exactly the edited manifest, it is written out anew as TOML, losing its
// comments but not its format. JSON is written as indented JSON. Every
// candidate is decoded again and compared with normalized, the edited
// manifest's JSON, before it is used.
func editedSource(current store.ManifestRevision, m *manifest.Manifest, normalized []byte) (source, format string, err error) {
	if current.SourceFormat != "json" && current.Source != "" {
		if old := mustDecodeTOML(current.Source); old != nil {
			have, err := json.Marshal(old)
			if patched, perr := tomledit.Patch([]byte(current.Source), have, normalized); err == nil && perr == nil && decodesTo(patched, "toml", normalized) {
				return string(patched), "toml", nil
			}
		}
		if whole, err := importer.Encode(m, "toml"); err == nil && decodesTo(whole, "toml", normalized) {
			return string(whole), "toml", nil
		}
	}
	indented, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", "", fmt.Errorf("encode manifest: %w", err)
	}
	return string(indented), "json", nil
}

// mustDecodeTOML decodes a saved TOML source, nil when it no longer
// decodes (a newer decoder refusing what an older one saved).
func mustDecodeTOML(src string) *manifest.Manifest {
	m, err := manifest.Decode([]byte(src), "toml")
	if err != nil {
		return nil
	}
	return m
}

// decodesTo says whether src decodes to exactly the manifest whose JSON
// is normalized.
func decodesTo(src []byte, format string, normalized []byte) bool {
	m, err := manifest.Decode(src, format)
	if err != nil {
		return false
	}
	b, err := json.Marshal(m)
	return err == nil && sameJSON(b, normalized)
}
