package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
)

// addFieldEditCommands adds the verbs that edit one part of the saved
// manifest (slipway app variable …, slipway app service …).
func addFieldEditCommands(app *cobra.Command) {
	variable := &cobra.Command{Use: "variable", Short: "Set or remove a variable in the saved manifest"}
	variable.AddCommand(newVariableSetCommand(), newVariableUnsetCommand())
	svc := &cobra.Command{Use: "service", Short: "Add, edit or remove a service in the saved manifest"}
	svc.AddCommand(newServiceSetCommand(), newServiceRenameCommand(), newServiceAddCommand(), newServiceRemoveCommand())
	app.AddCommand(variable, svc)
	addFieldEditPartCommands(app)
}

// editFlags are the flags every field edit shares.
type editFlags struct {
	expected int64
	deploy   bool
	wait     bool
	timeout  time.Duration
}

func (f *editFlags) add(cmd *cobra.Command) {
	cmd.Flags().Int64Var(&f.expected, "expected-revision", 0, "fail with generation_conflict unless this is the current revision")
	cmd.Flags().BoolVar(&f.deploy, "deploy", false, "deploy every environment that builds after saving")
	addWaitFlags(cmd, &f.wait, &f.timeout)
}

func (f *editFlags) options(cmd *cobra.Command) (client.EditOptions, error) {
	if f.wait && !f.deploy {
		return client.EditOptions{}, fmt.Errorf("--wait: only --deploy starts something to wait for (wait_without_deploy)")
	}
	o := client.EditOptions{Deploy: f.deploy}
	if cmd.Flags().Changed("expected-revision") {
		o.ExpectedRevision = &f.expected
	}
	return o, nil
}

// report prints what an edit saved, or every problem of an invalid result.
func (f *editFlags) report(cmd *cobra.Command, c *client.Client, app string, res api.FieldEditResponse, err error) error {
	if errs := client.ManifestErrors(err); errs != nil {
		for _, e := range errs {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s (%s)\n", e.Path, e.Message, e.Code)
		}
		return &exitError{code: 1, err: fmt.Errorf("the edited manifest of %s has %d error(s); nothing was saved (manifest_validation_failed)", app, len(errs))}
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if res.Unchanged {
		fmt.Fprintf(out, "application %s: unchanged, revision %d\n", app, res.Revision)
	} else {
		fmt.Fprintf(out, "application %s: revision %d\n", app, res.Revision)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(out, "warning: %s: %s (%s)\n", w.Path, w.Message, w.Code)
	}
	ids := make([]string, len(res.Deployments))
	for i, d := range res.Deployments {
		fmt.Fprintf(out, "deployment %s of %s queued\n", d.ID, d.Environment)
		ids[i] = d.ID
	}
	if !f.wait || len(ids) == 0 {
		return nil
	}
	return waitDeployments(cmd.Context(), c, out, f.timeout, ids...)
}

// variableValue types VALUE as --type says.
func variableValue(raw, typ string) (any, error) {
	switch typ {
	case "string":
		return raw, nil
	case "integer":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("VALUE %q: --type integer needs a whole number (variable_type_mismatch)", raw)
		}
		return n, nil
	case "boolean":
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("VALUE %q: --type boolean needs true or false (variable_type_mismatch)", raw)
		}
		return b, nil
	}
	return nil, fmt.Errorf("--type %q: use string, integer or boolean (type_invalid)", typ)
}

func newVariableSetCommand() *cobra.Command {
	var f editFlags
	var env, typ string
	cmd := &cobra.Command{
		Use:   "set APP NAME VALUE",
		Short: "Set a variable's default, or with --env its value in one environment",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			value, err := variableValue(args[2], typ)
			if err != nil {
				return err
			}
			o, err := f.options(cmd)
			if err != nil {
				return err
			}
			o.Env = env
			c, err := apiClient()
			if err != nil {
				return err
			}
			res, err := c.SetVariable(cmd.Context(), args[0], args[1], value, o)
			return f.report(cmd, c, args[0], res, err)
		},
	}
	cmd.Flags().StringVar(&env, "env", "", "set the value of this environment instead of the default")
	cmd.Flags().StringVar(&typ, "type", "string", "the value's type: string, integer or boolean")
	f.add(cmd)
	return cmd
}

func newVariableUnsetCommand() *cobra.Command {
	var f editFlags
	var env string
	cmd := &cobra.Command{
		Use:   "unset APP NAME",
		Short: "Remove a variable's default, or with --env its value in one environment",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := f.options(cmd)
			if err != nil {
				return err
			}
			o.Env = env
			c, err := apiClient()
			if err != nil {
				return err
			}
			res, err := c.UnsetVariable(cmd.Context(), args[0], args[1], o)
			return f.report(cmd, c, args[0], res, err)
		},
	}
	cmd.Flags().StringVar(&env, "env", "", "remove the value of this environment instead of the default")
	f.add(cmd)
	return cmd
}

func newServiceSetCommand() *cobra.Command {
	var f editFlags
	var replicas int64
	var image string
	var setEnv, unsetEnv []string
	cmd := &cobra.Command{
		Use:   "set APP SERVICE [--replicas N] [--image REF] [--env KEY=VALUE ...] [--unset-env KEY ...]",
		Short: "Change a service's replicas, image or environment variables",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var req api.ServiceUpdateRequest
			if cmd.Flags().Changed("replicas") {
				req.Replicas = &replicas
			}
			if cmd.Flags().Changed("image") {
				req.Image = &image
			}
			for _, kv := range setEnv {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return fmt.Errorf("--env %q: write KEY=VALUE (env_invalid)", kv)
				}
				if req.Environment == nil {
					req.Environment = map[string]*string{}
				}
				req.Environment[k] = &v
			}
			for _, k := range unsetEnv {
				if req.Environment == nil {
					req.Environment = map[string]*string{}
				}
				req.Environment[k] = nil
			}
			if req.Replicas == nil && req.Image == nil && req.Environment == nil {
				return fmt.Errorf("name something to change: --replicas, --image, --env or --unset-env (nothing_to_change)")
			}
			o, err := f.options(cmd)
			if err != nil {
				return err
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			res, err := c.UpdateService(cmd.Context(), args[0], args[1], req, o)
			return f.report(cmd, c, args[0], res, err)
		},
	}
	cmd.Flags().Int64Var(&replicas, "replicas", 1, "replica count (0 stops the service)")
	cmd.Flags().StringVar(&image, "image", "", "image reference (image services only)")
	cmd.Flags().StringArrayVar(&setEnv, "env", nil, "set an environment variable, KEY=VALUE (repeatable)")
	cmd.Flags().StringArrayVar(&unsetEnv, "unset-env", nil, "remove an environment variable (repeatable)")
	f.add(cmd)
	return cmd
}

func newServiceRenameCommand() *cobra.Command {
	var f editFlags
	cmd := &cobra.Command{
		Use:   "rename APP SERVICE NEW_NAME",
		Short: "Rename a service, repointing depends_on, jobs, routes and exports",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := f.options(cmd)
			if err != nil {
				return err
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			res, err := c.RenameService(cmd.Context(), args[0], args[1], args[2], o)
			return f.report(cmd, c, args[0], res, err)
		},
	}
	f.add(cmd)
	return cmd
}
