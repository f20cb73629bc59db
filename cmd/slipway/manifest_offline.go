package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/manifest"
)

// newAppCommand is the app command group. The offline verbs (validate,
// render, plan) need no server; the server verbs join the same group.
func newAppCommand() *cobra.Command {
	app := &cobra.Command{
		Use:   "app",
		Short: "Validate, render, plan and manage applications",
	}
	addOfflineAppCommands(app)
	addServerAppCommands(app)
	return app
}

// addOfflineAppCommands adds the verbs that work on manifest files alone.
func addOfflineAppCommands(app *cobra.Command) {
	app.AddCommand(
		newAppValidateCommand(),
		newAppRenderCommand(),
		newAppPlanCommand(),
		newAppImportCommand(),
	)
}

// newSchemaCommand prints the manifest's JSON Schema.
func newSchemaCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the manifest's JSON Schema (draft 7)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := manifest.Schema()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		},
	}
}

// loadedManifest is a manifest file read from disk with what error output
// needs: its source, for line and column numbers.
type loadedManifest struct {
	path   string
	data   []byte
	format string
}

func readManifestFile(path, flag string) (loadedManifest, error) {
	if path == "" {
		return loadedManifest{}, fmt.Errorf("%s: a manifest file is required (%s=application.toml)", flag, flag)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return loadedManifest{}, fmt.Errorf("%s: read manifest: %w", flag, err)
	}
	format := "toml"
	if strings.EqualFold(filepath.Ext(path), ".json") {
		format = "json"
	}
	return loadedManifest{path: path, data: data, format: format}, nil
}

// decode parses the file; problems come back as field errors with
// positions, like validation errors.
func (l loadedManifest) decode() (*manifest.Manifest, manifest.Errors) {
	m, err := manifest.Decode(l.data, l.format)
	if err == nil {
		return m, nil
	}
	var errs manifest.Errors
	if errors.As(err, &errs) {
		return nil, errs
	}
	return nil, manifest.Errors{{Code: "manifest_malformed", Message: err.Error()}}
}

// validate decodes and validates the file, returning every problem with
// line and column where the source has them.
func (l loadedManifest) validate() (*manifest.Manifest, manifest.Errors) {
	m, errs := l.decode()
	if len(errs) > 0 {
		return nil, errs
	}
	errs = manifest.Validate(m, manifest.ValidateOptions{})
	return m, errs.WithPositions(manifest.Positions(l.data))
}

// writeErrors prints errors as text, one a line, or as app validate's one
// JSON object {"valid": bool, "errors": [...]}.
func writeErrors(w io.Writer, format string, errs manifest.Errors) error {
	if format == "json" {
		data, err := manifest.FormatJSON(errs)
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	}
	_, err := io.WriteString(w, manifest.FormatText(errs))
	return err
}

func invalid(path string, errs manifest.Errors) error {
	noun := "errors"
	if len(errs) == 1 {
		noun = "error"
	}
	return &exitError{code: 1, err: fmt.Errorf("%s: %d %s", path, len(errs), noun)}
}

func checkFormat(flag, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return fmt.Errorf("%s: unsupported format %q; use %s", flag, value, strings.Join(allowed, " or "))
}

func newAppValidateCommand() *cobra.Command {
	var file, format string
	cmd := &cobra.Command{
		Use:   "validate --file application.toml",
		Short: "Check a manifest offline and list every error",
		Long: `Decode and validate a manifest file with the same parser and rules as the
server, without contacting one. Exits 0 when it is valid and 1 when it is
not, listing every error with its field path, code and position.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat("--format", format, "text", "json"); err != nil {
				return err
			}
			src, err := readManifestFile(file, "--file")
			if err != nil {
				return err
			}
			_, errs := src.validate()
			if err := writeErrors(cmd.OutOrStdout(), format, errs); err != nil {
				return err
			}
			if len(errs) > 0 {
				return invalid(src.path, errs)
			}
			if format == "text" {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is valid\n", src.path)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "manifest file (TOML, or JSON when it ends in .json)")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

func newAppRenderCommand() *cobra.Command {
	var file, env, preview, format string
	var vars []string
	cmd := &cobra.Command{
		Use:   "render --file application.toml --env NAME",
		Short: "Render a manifest's variables for an environment or a preview",
		Long: `Render every ${{ }} reference of a manifest as the environment (or, with
--preview, the preview of a branch) would get it, and print the rendered
manifest. deployment.id renders as "preview" and git.sha, for repository
manifests, as the environment's pinned commit or 40 zeros, as plans do.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat("--format", format, "toml", "json"); err != nil {
				return err
			}
			if env == "" && preview == "" {
				return errors.New("--env: name the environment to render for (or --preview BRANCH)")
			}
			src, err := readManifestFile(file, "--file")
			if err != nil {
				return err
			}
			m, errs := src.validate()
			if len(errs) > 0 {
				_ = writeErrors(cmd.ErrOrStderr(), "text", errs)
				return invalid(src.path, errs)
			}
			rc, err := renderContext(m, env, preview, vars)
			if err != nil {
				return err
			}
			out, errs := manifest.Render(m, rc)
			if len(errs) > 0 {
				_ = writeErrors(cmd.ErrOrStderr(), "text", errs.WithPositions(manifest.Positions(src.data)))
				return invalid(src.path, errs)
			}
			data, err := encodeManifest(out, format)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "manifest file (TOML, or JSON when it ends in .json)")
	cmd.Flags().StringVar(&env, "env", "", "environment to render for")
	cmd.Flags().StringVar(&preview, "preview", "", "render for the preview of this branch instead")
	cmd.Flags().StringArrayVar(&vars, "var", nil, "override a variable: name=value (repeatable)")
	cmd.Flags().StringVar(&format, "format", "toml", "output format: toml or json")
	return cmd
}

// renderContext builds the context a plan renders with
// (manifest.PlanContext) for the environment env, or the preview of the
// branch preview: nothing is fetched, so a repository manifest's git.branch
// and git.sha are the environment's branch and pinned commit (from its
// [spec.environments] block), or the connection's.
func renderContext(m *manifest.Manifest, env, preview string, vars []string) (manifest.RenderContext, error) {
	t := manifest.Target{Name: env}
	if preview != "" {
		slug := manifest.PreviewSlug(m.Metadata.Name, preview, "")
		t = manifest.Target{Name: slug, Slug: slug, Preview: true, Branch: preview}
	} else if block, ok := m.Spec.Environments[env]; ok {
		t.Branch, t.Commit = block.Branch, block.Commit
	}
	rc := manifest.PlanContext(m, t)
	if len(vars) > 0 {
		scope := manifest.Scope(m, rc)
		rc.Overrides = make(map[string]manifest.Value, len(vars))
		for _, kv := range vars {
			name, raw, ok := strings.Cut(kv, "=")
			if !ok || name == "" {
				return rc, fmt.Errorf("--var %q: expected name=value", kv)
			}
			v, err := overrideValue(m, scope, name, raw)
			if err != nil {
				return rc, fmt.Errorf("--var %s: %w", name, err)
			}
			rc.Overrides[name] = v
		}
	}
	return rc, nil
}

// overrideValue types a --var value like the variable it overrides, since
// a command line only has text: an integer variable takes an integer.
func overrideValue(m *manifest.Manifest, scope map[string]manifest.Value, name, raw string) (manifest.Value, error) {
	cur, ok := scope[manifest.NamespaceVars+"."+name]
	if !ok && !declares(m, name) {
		return manifest.Value{}, fmt.Errorf("variable %q is declared nowhere in the manifest (variable_undeclared)", name)
	}
	switch cur.Interface().(type) {
	case int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return manifest.Value{}, fmt.Errorf("%q is not an integer, and the variable is one (variable_type_mismatch)", raw)
		}
		return manifest.IntValue(n), nil
	case bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return manifest.Value{}, fmt.Errorf("%q is not true or false, and the variable is a boolean (variable_type_mismatch)", raw)
		}
		return manifest.BoolValue(b), nil
	}
	return manifest.StringValue(raw), nil
}

// declares reports whether any variables table of m declares name, even
// one that does not apply to the environment being rendered.
func declares(m *manifest.Manifest, name string) bool {
	if _, ok := m.Spec.Variables[name]; ok {
		return true
	}
	for _, e := range m.Spec.Environments {
		if _, ok := e.Variables[name]; ok {
			return true
		}
	}
	if m.Spec.Previews != nil {
		_, ok := m.Spec.Previews.Variables[name]
		return ok
	}
	return false
}

func encodeManifest(m *manifest.Manifest, format string) ([]byte, error) {
	var buf bytes.Buffer
	if format == "json" {
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(m); err != nil {
			return nil, fmt.Errorf("encode rendered manifest: %w", err)
		}
		return buf.Bytes(), nil
	}
	enc := toml.NewEncoder(&buf).SetIndentTables(false).EnableMarshalerInterface()
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode rendered manifest: %w", err)
	}
	return buf.Bytes(), nil
}

func newAppPlanCommand() *cobra.Command {
	var file, against, format string
	cmd := &cobra.Command{
		Use:   "plan --file NEW.toml --against OLD.toml",
		Short: "Show offline what saving a manifest would change",
		Long: `Compare a manifest with an older one (without --against, with nothing: a new
application) and list the changed fields, with environment values, commands
and file contents redacted; how the declared environments would converge;
each service's rollout order and monitor window; the spec hash a deployment
to each environment would record, with each service's hash marked against
the --against manifest's (+ added, ~ changed, = unchanged, - removed,
? known only when deploying); and warnings, including
those only an environment's own variables (or, for previews, those of
[spec.previews]) raise. Whether an environment is granted telemetry is
known to the server only: a manifest with a receives_telemetry service
gets telemetry_grant_unchecked here, and
slipway app apply reports telemetry_not_granted per environment.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat("--format", format, "text", "json"); err != nil {
				return err
			}
			src, err := readManifestFile(file, "--file")
			if err != nil {
				return err
			}
			next, errs := src.validate()
			if len(errs) > 0 {
				_ = writeErrors(cmd.ErrOrStderr(), "text", errs)
				return invalid(src.path, errs)
			}
			var prev *manifest.Manifest
			if against != "" {
				old, err := readManifestFile(against, "--against")
				if err != nil {
					return err
				}
				var errs manifest.Errors
				// The old manifest was accepted once; only decoding matters,
				// as rules may have changed since.
				if prev, errs = old.decode(); len(errs) > 0 {
					_ = writeErrors(cmd.ErrOrStderr(), "text", errs.WithPositions(manifest.Positions(old.data)))
					return invalid(old.path, errs)
				}
			}
			plan := manifest.NewPlan(prev, next, nil)
			plan.Hashes = manifest.PlanHashes(next, offlineHashTargets(prev, next))
			plan.Warnings = append(plan.Warnings, offlinePlanWarnings(next)...)
			if format == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(plan)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), manifest.FormatPlan(plan))
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the new manifest")
	cmd.Flags().StringVar(&against, "against", "", "the manifest it replaces (omit for a new application)")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}
