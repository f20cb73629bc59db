package importer

import (
	"bytes"
	"encoding/json"
	"fmt"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/slipwayhq/slipway/manifest"
)

// Encode writes a manifest as TOML or JSON. Int, Value and Repository
// implement the marshaler interfaces, so references and "self" come out as
// the manifest spec writes them.
func Encode(m *manifest.Manifest, format string) ([]byte, error) {
	var buf bytes.Buffer
	switch format {
	case "toml", "":
		enc := toml.NewEncoder(&buf).EnableMarshalerInterface().SetIndentTables(false)
		if err := enc.Encode(m); err != nil {
			return nil, fmt.Errorf("encode manifest as TOML: %w", err)
		}
	case "json":
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			return nil, fmt.Errorf("encode manifest as JSON: %w", err)
		}
	default:
		return nil, fmt.Errorf("format %q is neither toml nor json (format_invalid)", format)
	}
	return buf.Bytes(), nil
}
