package importer

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
	toml "github.com/pelletier/go-toml/v2"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer/compose"
	"github.com/slipwayhq/slipway/manifest/importer/gordon"
	"github.com/slipwayhq/slipway/manifest/importer/hakopod"
	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
	"github.com/slipwayhq/slipway/manifest/importer/ply"
	"github.com/slipwayhq/slipway/manifest/importer/skali"
)

// Diagnostic is one warning or error about a field of the source file.
type Diagnostic = convert.Diagnostic

// Severity is warning or error.
type Severity = convert.Severity

// Severities.
const (
	SeverityWarning = convert.SeverityWarning
	SeverityError   = convert.SeverityError
)

// Options are the caller's choices for one import.
type Options = convert.Options

// Dialects, as --from names them.
const (
	Gordon  = "gordon"
	Hakopod = "hakopod"
	Skali   = "skali"
	Ply     = "ply"
	Compose = "compose"
	Auto    = "auto"
)

// MaxBytes bounds the source files Import reads; every dialect caps its own
// manifests below this.
const MaxBytes = 1 << 20

// Dialects lists the supported source dialects.
var Dialects = []string{Gordon, Hakopod, Skali, Ply, Compose}

// Result is an import's outcome. Manifest is nil when the source could not be
// read at all, when it builds from its own project and Options.Repository is
// empty, or when the translation did not produce a valid native manifest; it
// is otherwise always valid (it passes manifest.Validate as slipway app
// validate runs it), even when Diagnostics hold errors: the untranslatable
// parts are left out.
type Result struct {
	Manifest    *manifest.Manifest
	Diagnostics []Diagnostic
	Dialect     string
}

// OK reports whether the import is faithful: a manifest and no errors.
func (r Result) OK() bool { return r.Manifest != nil && !convert.HasErrors(r.Diagnostics) }

// Import translates data written in dialect (not auto: call Detect first).
// The error is only for an unknown dialect; problems with the file are
// diagnostics.
func Import(dialect string, data []byte, opts Options) (Result, error) {
	var (
		m     *manifest.Manifest
		diags []Diagnostic
	)
	if len(data) > MaxBytes {
		return Result{Dialect: dialect, Diagnostics: []Diagnostic{{Severity: SeverityError, Message: fmt.Sprintf("the file is larger than %d bytes", MaxBytes)}}}, nil
	}
	switch dialect {
	case Gordon:
		m, diags = gordon.Import(data, opts)
	case Hakopod:
		m, diags = hakopod.Import(data, opts)
	case Skali:
		m, diags = skali.Import(data, opts)
	case Ply:
		m, diags = ply.Import(data, opts)
	case Compose:
		m, diags = compose.Import(data, opts)
	default:
		return Result{}, fmt.Errorf("import: dialect %q is not one of %s (unknown_dialect)", dialect, strings.Join(Dialects, ", "))
	}
	if m != nil && opts.Repository != "" && needsRepository(m) {
		m.Spec.Manifest = &manifest.ManifestSource{
			Path:       or(opts.ManifestPath, "slipway.toml"),
			Repository: &manifest.Repository{URL: opts.Repository, Branch: or(opts.Branch, "main")},
		}
	}
	if m != nil {
		for _, fe := range validate(m) {
			if fe.Code == "self_requires_repository" {
				// The translator already asked for --repository.
				m = nil
				continue
			}
			if strings.HasPrefix(fe.Path, "spec.manifest") {
				// Built from the --repository, --branch and --manifest-path
				// options, not from the file.
				diags = append(diags, Diagnostic{Severity: SeverityError, Path: "--repository", Message: fmt.Sprintf("%s (%s)", fe.Message, fe.Code)})
				m = nil
				continue
			}
			// A translator bug, not the user's: say so, and never hand out an
			// invalid manifest.
			diags = append(diags, Diagnostic{Severity: SeverityError, Path: "", Message: fmt.Sprintf("the translated manifest is invalid at %s: %s (%s); please report this", fe.Path, fe.Message, fe.Code)})
			m = nil
		}
	}
	convert.Sort(diags)
	return Result{Manifest: m, Diagnostics: diags, Dialect: dialect}, nil
}

// validate runs the manifest engine's validator exactly as slipway app
// validate does, so whatever Import hands out passes it.
func validate(m *manifest.Manifest) manifest.Errors {
	return manifest.Validate(m, manifest.ValidateOptions{})
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// needsRepository reports whether m reads its own repository: a service
// built from it, or a file read from it.
func needsRepository(m *manifest.Manifest) bool {
	for _, s := range m.Spec.Services {
		if s.Source.Repository != nil && s.Source.Repository.Self {
			return true
		}
		for _, f := range s.Files {
			if f.Path != "" {
				return true
			}
		}
	}
	return false
}

// hasAny reports whether m has one of keys.
func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// Detect guesses the dialect of a file from its name and shape. It never
// guesses between two plausible dialects: it fails and asks for --from.
func Detect(data []byte, filename string) (string, error) {
	base := strings.ToLower(filepath.Base(filename))
	switch {
	case base == "skali.yaml" || base == "skali.yml":
		return Skali, nil
	case base == "ply.toml" || base == "stack.toml":
		return Ply, nil
	case isComposeName(base):
		return Compose, nil
	}
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		var doc map[string]any
		if yaml.Unmarshal(data, &doc) != nil || doc == nil {
			return "", fmt.Errorf("detect: %s is neither TOML nor YAML; pass --from (detect_failed)", filename)
		}
		_, apps := doc["applications"]
		_, dbs := doc["databases"]
		_, buckets := doc["buckets"]
		_, services := doc["services"].(map[string]any)
		switch {
		case apps || dbs || buckets:
			return Skali, nil
		case services:
			return Compose, nil
		}
		return "", fmt.Errorf("detect: %s is YAML but neither a skali manifest nor a Compose file; pass --from (detect_failed)", filename)
	}
	_, hasPackage := raw["package"]
	_, hasRun := raw["run"]
	_, hasStack := raw["stack"]
	_, hasServiceArray := raw["service"]
	_, hasSchema := raw["schema_version"]
	services, hasServices := raw["services"].(map[string]any)
	switch {
	case hasSchema:
		return Hakopod, nil
	case hasPackage || hasStack || hasRun:
		return Ply, nil
	case hasServiceArray:
		// gordon's v3 alpha form.
		return Gordon, nil
	case hasServices:
		// Keys only one of the two reads, at the top level, then in a
		// service.
		if hasAny(raw, "network", "telemetry") {
			return Gordon, nil
		}
		if hasAny(raw, "domains", "networks", "secrets", "volumes", "inject_env") {
			return Hakopod, nil
		}
		for _, s := range services {
			sm, _ := s.(map[string]any)
			if hasAny(sm, "public", "port", "ports", "size", "replicas", "job", "healthcheck", "args", "autoscaling",
				"depends_on", "files", "mounts", "networks", "resources", "update_strategy", "suspended") {
				return Hakopod, nil
			}
			if hasAny(sm, "http", "readiness", "stop_grace", "tcp", "udp", "rcon", "bind", "devices", "telemetry", "backup", "database") {
				return Gordon, nil
			}
		}
		return "", fmt.Errorf("detect: %s has [services] tables that fit both gordon and hakopod; pass --from (detect_ambiguous)", filename)
	}
	return "", fmt.Errorf("detect: %s does not look like a gordon, hakopod, skali, ply or Compose file; pass --from (detect_failed)", filename)
}

// isComposeName reports the names Docker Compose looks for, and their
// variants: compose.yaml, docker-compose.yml, docker-compose.prod.yml.
func isComposeName(base string) bool {
	ext := filepath.Ext(base)
	if ext != ".yaml" && ext != ".yml" {
		return false
	}
	stem := strings.TrimSuffix(base, ext)
	for _, prefix := range []string{"compose", "docker-compose"} {
		if stem == prefix || strings.HasPrefix(stem, prefix+".") {
			return true
		}
	}
	return false
}
