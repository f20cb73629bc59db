package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api/client"
)

// addServerAppCommands adds the app verbs that talk to a Slipway server.
func addServerAppCommands(app *cobra.Command) {
	app.AddCommand(newAppApplyCommand(), newAppStatusCommand(), newAppListCommand(), newAppDeleteCommand())
	addSecretCommands(app)
	addReleaseCommands(app)
	addFieldEditCommands(app)
	app.AddCommand(newAppRepositoryCommand()) // env_branch.go
	app.AddCommand(newAppLinksCommand())      // env_links.go
}

func newAppApplyCommand() *cobra.Command {
	var file string
	var deploy, wait bool
	var timeout time.Duration
	var expected int64
	cmd := &cobra.Command{
		Use:   "apply --file F",
		Short: "Save a manifest as the application's next revision, and deploy it with --deploy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return fmt.Errorf("--file: name the manifest to apply (file_required)")
			}
			if wait && !deploy {
				return fmt.Errorf("--wait: only --deploy starts something to wait for (wait_without_deploy)")
			}
			doc, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("--file %s: %w", file, err)
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			opts := client.ApplyOptions{Deploy: deploy}
			if strings.EqualFold(filepath.Ext(file), ".json") {
				opts.Format = "json"
			}
			if cmd.Flags().Changed("expected-revision") {
				opts.ExpectedRevision = &expected
			}
			out := cmd.OutOrStdout()
			res, err := c.Apply(cmd.Context(), doc, opts)
			if errs := client.ManifestErrors(err); errs != nil {
				for _, e := range errs {
					line := fmt.Sprintf("%s: %s (%s)", e.Path, e.Message, e.Code)
					if e.Line > 0 {
						line += fmt.Sprintf(" at line %d column %d", e.Line, e.Column)
					}
					fmt.Fprintln(cmd.ErrOrStderr(), file+": "+line)
				}
				return &exitError{code: 1, err: fmt.Errorf("--file %s: the manifest has %d error(s) (manifest_validation_failed)", file, len(errs))}
			}
			if err != nil {
				return err
			}
			switch {
			case res.Unchanged:
				fmt.Fprintf(out, "application %s: unchanged, revision %d\n", res.Application.Name, res.Revision)
			case res.Created:
				fmt.Fprintf(out, "application %s: created, revision %d\n", res.Application.Name, res.Revision)
			default:
				fmt.Fprintf(out, "application %s: revision %d\n", res.Application.Name, res.Revision)
			}
			if len(res.CreatedEnvironments) > 0 {
				fmt.Fprintf(out, "created environments: %s\n", strings.Join(res.CreatedEnvironments, ", "))
			}
			if len(res.UndeclaredEnvironments) > 0 {
				fmt.Fprintf(out, "environments no longer declared (kept): %s\n", strings.Join(res.UndeclaredEnvironments, ", "))
			}
			for _, w := range res.Warnings {
				fmt.Fprintf(out, "warning: %s: %s (%s)\n", w.Path, w.Message, w.Code)
			}
			ids := make([]string, len(res.Deployments))
			for i, d := range res.Deployments {
				fmt.Fprintf(out, "deployment %s of %s queued\n", d.ID, d.Environment)
				ids[i] = d.ID
			}
			if deploy && len(ids) == 0 {
				fmt.Fprintln(out, "nothing to deploy: every declared environment is promoted from another")
			}
			if !wait || len(ids) == 0 {
				return nil
			}
			return waitDeployments(cmd.Context(), c, out, timeout, ids...)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the manifest (TOML, or JSON when it ends in .json)")
	cmd.Flags().BoolVar(&deploy, "deploy", false, "deploy every declared environment that builds")
	cmd.Flags().Int64Var(&expected, "expected-revision", 0, "fail with generation_conflict unless this is the current revision")
	addWaitFlags(cmd, &wait, &timeout)
	return cmd
}

func newAppStatusCommand() *cobra.Command {
	var env, format string
	cmd := &cobra.Command{
		Use:   "status APP",
		Short: "Show what runs: per service replicas, health, image and last error, read live from Docker",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return &exitError{code: 2, err: fmt.Errorf("--format: %q is neither text nor json (format_invalid)", format)}
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			st, err := c.Status(cmd.Context(), args[0], env)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if format == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			for _, e := range st.Environments {
				fmt.Fprintf(out, "environment %s", e.Name)
				if d := e.LatestDeployment; d != nil {
					fmt.Fprintf(out, ": deployment %s %s (revision %d)", d.ID, d.State, d.Revision)
					if d.SpecHash != "" {
						fmt.Fprintf(out, ", spec %s", shortHash(d.SpecHash))
					}
				} else {
					fmt.Fprint(out, ": never deployed")
				}
				fmt.Fprintln(out)
				if e.Error != "" {
					fmt.Fprintf(out, "  services unknown: %s: %s\n", e.Error, e.ErrorMessage)
					continue
				}
				if len(e.Services) == 0 {
					fmt.Fprintln(out, "  no services running")
					continue
				}
				tw := newTable(out, "  SERVICE", "REPLICAS", "HEALTH", "IMAGE", "LAST ERROR")
				for _, s := range e.Services {
					tw.row("  "+s.Service, fmt.Sprintf("%d/%d", s.Running, s.Desired), s.Health, s.Image, s.LastError)
				}
				if err := tw.flush(); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&env, "env", "", "only this environment")
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}

func newAppListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the team's applications",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			apps, err := c.Applications(cmd.Context())
			if err != nil {
				return err
			}
			tw := newTable(cmd.OutOrStdout(), "NAME", "ID", "REVISION")
			for _, a := range apps {
				tw.row(a.Name, a.ID, fmt.Sprint(a.CurrentRevision))
			}
			return tw.flush()
		},
	}
}

// sameApp reports whether ref (an application id or name) is the
// application with id.
func sameApp(cmd *cobra.Command, c *client.Client, ref, id string) bool {
	if ref == id {
		return true
	}
	return appIDOf(cmd.Context(), c, ref) == id
}

func appIDOf(ctx context.Context, c *client.Client, ref string) string {
	apps, err := c.Applications(ctx)
	if err != nil {
		return ""
	}
	for _, a := range apps {
		if a.Name == ref || a.ID == ref {
			return a.ID
		}
	}
	return ""
}

// table writes aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(out io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")) }
func (t *table) flush() error        { return t.tw.Flush() }

// shortHash is the first 12 hex digits of a spec hash, as status lists
// it (deployment show prints it whole).
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
