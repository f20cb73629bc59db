package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/manifest"
)

// addFieldEditPartCommands adds slipway app route|job|file|export|import.
func addFieldEditPartCommands(app *cobra.Command) {
	route := &cobra.Command{Use: "route", Short: "Add, change or remove a route in the saved manifest"}
	route.AddCommand(newRouteSetCommand(), newEditRemoveCommand("remove APP ROUTE", "Remove a route", 2,
		func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
			return c.RemoveRoute(cmd.Context(), args[0], args[1], o)
		}))
	job := &cobra.Command{Use: "job", Short: "Add, change or remove a job in the saved manifest"}
	job.AddCommand(newJobSetCommand(), newEditRemoveCommand("remove APP JOB", "Remove a job", 2,
		func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
			return c.RemoveJob(cmd.Context(), args[0], args[1], o)
		}))
	file := &cobra.Command{Use: "file", Short: "Add, change or remove a service's read-only file in the saved manifest"}
	file.AddCommand(newFileSetCommand(), newEditRemoveCommand("remove APP SERVICE TARGET", "Remove the file a service mounts at TARGET", 3,
		func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
			return c.RemoveFile(cmd.Context(), args[0], args[1], args[2], o)
		}))
	export := &cobra.Command{Use: "exports", Short: "Export a service to other applications, or stop"}
	export.AddCommand(newExportAddCommand(), newEditRemoveCommand("remove APP SERVICE", "Stop exporting a service", 2,
		func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
			return c.RemoveExport(cmd.Context(), args[0], args[1], o)
		}))
	imp := &cobra.Command{Use: "imports", Short: "Import another application's exported service, or stop"}
	imp.AddCommand(newImportAddCommand(), newEditRemoveCommand("remove APP FROM_APP SERVICE", "Remove an import", 3,
		func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
			return c.RemoveImport(cmd.Context(), args[0], args[1], args[2], o)
		}))
	app.AddCommand(route, job, file, export, imp, newAppRenameCommand())
}

// newAppRenameCommand is slipway app rename OLD NEW.
func newAppRenameCommand() *cobra.Command {
	var expected int64
	cmd := &cobra.Command{
		Use:   "rename OLD NEW",
		Short: "Rename an application, keeping its environments, deployments, secrets and volumes",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var o client.EditOptions
			if cmd.Flags().Changed("expected-revision") {
				o.ExpectedRevision = &expected
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			res, err := c.RenameApplication(cmd.Context(), args[0], args[1], o)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application %s renamed to %s", res.OldName, res.Application.Name)
			if res.Revision > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), ": revision %d names it %s; rename metadata.name in your manifest file too", res.Revision, res.Application.Name)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().Int64Var(&expected, "expected-revision", 0, "fail with generation_conflict unless this is the current revision")
	return cmd
}

// editCall sends one field edit.
type editCall func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error)

// runFieldEdit resolves the edit flags and client, sends call and reports.
func runFieldEdit(cmd *cobra.Command, f *editFlags, args []string, call editCall) error {
	o, err := f.options(cmd)
	if err != nil {
		return err
	}
	c, err := apiClient()
	if err != nil {
		return err
	}
	res, err := call(cmd, c, args, o)
	return f.report(cmd, c, args[0], res, err)
}

func newEditRemoveCommand(use, short string, nargs int, call editCall) *cobra.Command {
	var f editFlags
	cmd := &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(nargs),
		RunE: func(cmd *cobra.Command, args []string) error { return runFieldEdit(cmd, &f, args, call) },
	}
	f.add(cmd)
	return cmd
}

func newRouteSetCommand() *cobra.Command {
	var f editFlags
	var r manifest.Route
	var redirect manifest.Redirect
	cmd := &cobra.Command{
		Use:   "set APP ROUTE --hostname HOST (--service S --port P | --redirect-to URL)",
		Short: "Add the route named ROUTE, or replace it",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r.Name = args[1]
			if redirect.To != "" {
				r.Redirect = &redirect
			}
			return runFieldEdit(cmd, &f, args, func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
				return c.SetRoute(cmd.Context(), args[0], r, o)
			})
		},
	}
	cmd.Flags().StringVar(&r.Hostname, "hostname", "", "exact hostname, or *. wildcard one label deep")
	cmd.Flags().StringVar(&r.Service, "service", "", "target service")
	cmd.Flags().IntVar(&r.Port, "port", 0, "target service port")
	cmd.Flags().StringVar(&r.Visibility, "visibility", "", "public or private (default private)")
	cmd.Flags().StringVar(&redirect.To, "redirect-to", "", "answer with a redirect to this URL instead of proxying")
	cmd.Flags().IntVar(&redirect.Status, "redirect-status", 0, "redirect status: 301, 302, 303, 307 or 308 (default 308)")
	f.add(cmd)
	return cmd
}

func newJobSetCommand() *cobra.Command {
	var f editFlags
	var j manifest.Job
	var timeout int64
	var env []string
	cmd := &cobra.Command{
		Use:   "set APP JOB --service S [--command ARG ...] [--timeout-seconds N] [--volume-access read-only|exclusive] [--stop-service] [--env KEY=VALUE ...]",
		Short: "Add the job named JOB, or replace it",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			j.Name = args[1]
			if cmd.Flags().Changed("timeout-seconds") {
				j.TimeoutSeconds = manifest.NewInt(timeout)
			}
			var err error
			if j.Environment, err = envPairs(env); err != nil {
				return err
			}
			return runFieldEdit(cmd, &f, args, func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
				return c.SetJob(cmd.Context(), args[0], j, o)
			})
		},
	}
	cmd.Flags().StringVar(&j.Service, "service", "", "service whose image, environment, secrets and mounts the job reuses")
	cmd.Flags().StringArrayVar(&j.Command, "command", nil, "one argument of the command (repeat for each)")
	cmd.Flags().Int64Var(&timeout, "timeout-seconds", 300, "timeout, 1-86400")
	cmd.Flags().StringVar(&j.VolumeAccess, "volume-access", "", "read-only (default) or exclusive")
	cmd.Flags().BoolVar(&j.StopService, "stop-service", false, "stop the service while the job runs")
	cmd.Flags().StringArrayVar(&env, "env", nil, "an environment variable for the job only, KEY=VALUE (repeatable)")
	f.add(cmd)
	return cmd
}

func newFileSetCommand() *cobra.Command {
	var f editFlags
	var file manifest.File
	var local string
	cmd := &cobra.Command{
		Use:   "set APP SERVICE TARGET (--content TEXT | --from-file LOCAL | --path REPO_PATH) [--mode 0444]",
		Short: "Mount a read-only file in a service at TARGET, or replace the one there",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			file.Target = args[2]
			if local != "" {
				if file.Content != "" {
					return fmt.Errorf("--from-file and --content both give the content: pick one (content_ambiguous)")
				}
				b, err := os.ReadFile(local)
				if err != nil {
					return fmt.Errorf("--from-file: %w", err)
				}
				file.Content = string(b)
			}
			return runFieldEdit(cmd, &f, args, func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
				return c.SetFile(cmd.Context(), args[0], args[1], file, o)
			})
		},
	}
	cmd.Flags().StringVar(&file.Content, "content", "", "the file's content")
	cmd.Flags().StringVar(&local, "from-file", "", "read the content from this local file")
	cmd.Flags().StringVar(&file.Path, "path", "", "a path in the manifest repository instead of content")
	cmd.Flags().StringVar(&file.Mode, "mode", "", "octal mode, 0000-0777 (default 0444)")
	f.add(cmd)
	return cmd
}

func newExportAddCommand() *cobra.Command {
	var f editFlags
	var req api.ExportSetRequest
	cmd := &cobra.Command{
		Use:   "add APP SERVICE --to OTHER_APP [--to ...] [--previews]",
		Short: "Let other applications import SERVICE (replaces the list when already exported)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFieldEdit(cmd, &f, args, func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
				return c.SetExport(cmd.Context(), args[0], args[1], req, o)
			})
		},
	}
	cmd.Flags().StringArrayVar(&req.Applications, "to", nil, "an application that may import the service (repeatable)")
	cmd.Flags().BoolVar(&req.Previews, "previews", false, "let their previews import it too")
	f.add(cmd)
	return cmd
}

func newImportAddCommand() *cobra.Command {
	var f editFlags
	var req api.ImportSetRequest
	cmd := &cobra.Command{
		Use:   "add APP FROM_APP SERVICE [--environment ENV]",
		Short: "Reach SERVICE, exported by FROM_APP, through a link",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFieldEdit(cmd, &f, args, func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
				return c.SetImport(cmd.Context(), args[0], args[1], args[2], req, o)
			})
		},
	}
	cmd.Flags().StringVar(&req.Environment, "environment", "", "FROM_APP's environment (default the same name as each of ours)")
	f.add(cmd)
	return cmd
}

// newEnvVisibilityCommand is slipway env visibility APP ENV public|private|default.
func newEnvVisibilityCommand() *cobra.Command {
	var f editFlags
	cmd := &cobra.Command{
		Use:       "visibility APP ENV public|private|default",
		Short:     "Set the strictest visibility an environment's routes get (default removes the setting: public)",
		Args:      cobra.ExactArgs(3),
		ValidArgs: []string{"public", "private", "default"},
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := settingValue("visibility", args[2], "public", "private")
			if err != nil {
				return err
			}
			return runFieldEdit(cmd, &f, args, func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
				return c.SetVisibility(cmd.Context(), args[0], args[1], v, o)
			})
		},
	}
	f.add(cmd)
	return cmd
}

// newEnvRollbackCommand is slipway env rollback APP ENV automatic|manual|default --yes.
func newEnvRollbackCommand() *cobra.Command {
	var f editFlags
	var yes bool
	cmd := &cobra.Command{
		Use:   "rollback APP ENV automatic|manual|default --yes",
		Short: "Set whether failed rollouts of an environment roll back automatically (default removes the setting)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := settingValue("rollback", args[2], "automatic", "manual")
			if err != nil {
				return err
			}
			if !yes {
				return fmt.Errorf("this changes what happens when a rollout of %s fails: add --yes to confirm (confirmation_required)", args[1])
			}
			return runFieldEdit(cmd, &f, args, func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
				return c.SetRollback(cmd.Context(), args[0], args[1], v, o)
			})
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the change")
	f.add(cmd)
	return cmd
}

// settingValue maps "default" to "" (removing the setting) and refuses
// anything but allowed.
func settingValue(name, arg string, allowed ...string) (string, error) {
	if arg == "default" {
		return "", nil
	}
	for _, a := range allowed {
		if arg == a {
			return arg, nil
		}
	}
	return "", fmt.Errorf("%s %q: use %s or default (%s_invalid)", name, arg, strings.Join(allowed, ", "), name)
}

// newEnvTelemetryCommand is slipway env telemetry APP ENV on|off.
func newEnvTelemetryCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "telemetry APP ENV on|off",
		Short: "Grant or revoke the daemon's telemetry socket to ENV's receives_telemetry service (needs telemetry:grant)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			var on bool
			switch args[2] {
			case "on":
				on = true
			case "off":
			default:
				return fmt.Errorf("%q: use on or off (telemetry_invalid)", args[2])
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			res, err := c.SetTelemetry(cmd.Context(), args[0], args[1], on)
			if err != nil {
				return err
			}
			state := "revoked"
			if res.Granted {
				state = "granted"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "telemetry %s to %s of %s", state, res.Environment, args[0])
			if res.Receiver != "" {
				fmt.Fprintf(cmd.OutOrStdout(), " (receiver %s; the mount follows within seconds)", res.Receiver)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			for _, w := range res.Warnings {
				fmt.Fprintf(cmd.OutOrStdout(), "warning: %s: %s (%s)\n", w.Path, w.Message, w.Code)
			}
			return nil
		},
	}
}
