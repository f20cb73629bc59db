package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/secrets"
)

// addSecretCommands adds `app secret …` and `app generated-secret …`.
// Values are read from a file or stdin only, never from an argument, so
// they stay out of shell history and process listings; no verb prints one.
func addSecretCommands(app *cobra.Command) {
	secret := &cobra.Command{
		Use:     "secret",
		Aliases: []string{"secrets"},
		Short:   "Set, list, delete and grant an application's stored secrets (values are write-only)",
	}
	secret.AddCommand(newSecretSetCommand(), newSecretListCommand(), newSecretDeleteCommand(), newSecretAccessCommand())
	generated := &cobra.Command{
		Use:     "generated-secret",
		Aliases: []string{"generated-secrets"},
		Short:   "Declare or remove generated secrets, or list an environment's",
	}
	generated.AddCommand(newGeneratedSecretListCommand(), newGeneratedSecretSetCommand(), newGeneratedSecretRemoveCommand())
	app.AddCommand(secret, generated)
}

// readSecretValue reads the value from --value-file or stdin, keeping the
// bytes exactly (a trailing newline is part of the value: files mount
// byte for byte).
func readSecretValue(cmd *cobra.Command, file string, fromStdin bool) ([]byte, error) {
	switch {
	case file != "" && fromStdin:
		return nil, fmt.Errorf("--value-file and --from-stdin: use one (value_source_conflict)")
	case file != "":
		v, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--value-file %s: %w (value_file_unreadable)", file, err)
		}
		return v, nil
	case fromStdin:
		v, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), secrets.MaxValueSize+1))
		if err != nil {
			return nil, fmt.Errorf("--from-stdin: %w (value_unreadable)", err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("--value-file or --from-stdin: give the value in a file or on stdin, never as an argument (value_required)")
}

func newSecretSetCommand() *cobra.Command {
	var file string
	var fromStdin, previews bool
	var envs []string
	cmd := &cobra.Command{
		Use:   "set APP NAME (--value-file F | --from-stdin)",
		Short: "Store a new version of a secret; --env/--previews also replace who may mount it",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			value, err := readSecretValue(cmd, file, fromStdin)
			if err != nil {
				return err
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			var envp *[]string
			var prevp *bool
			if cmd.Flags().Changed("env") {
				envp = &envs
			}
			if cmd.Flags().Changed("previews") {
				prevp = &previews
			}
			s, err := c.SetSecret(cmd.Context(), args[0], args[1], value, envp, prevp)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "secret %s: version %d (%d bytes), %s\n", s.Name, s.Version, len(value), accessText(s))
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "value-file", "", "read the value from this file (bytes as they are)")
	cmd.Flags().BoolVar(&fromStdin, "from-stdin", false, "read the value from standard input")
	cmd.Flags().StringArrayVar(&envs, "env", nil, "only these environments may mount it (repeatable; default every environment)")
	cmd.Flags().BoolVar(&previews, "previews", false, "previews may mount it too")
	return cmd
}

// accessText says who may mount a secret.
func accessText(s api.Secret) string {
	who := "every environment"
	if !s.AllEnvironments {
		who = "environments: " + strings.Join(s.Environments, ", ")
		if len(s.Environments) == 0 {
			who = "no environment"
		}
	}
	if s.Previews {
		who += ", previews"
	}
	return who
}

func newSecretListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list APP",
		Short: "List stored secrets: names, versions and access (never values)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			list, err := c.Secrets(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "application %s has no stored secrets\n", args[0])
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tVERSION\tUPDATED\tACCESS")
			for _, s := range list {
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", s.Name, s.Version, s.UpdatedAt.UTC().Format(time.RFC3339), accessText(s))
			}
			return w.Flush()
		},
	}
}

func newSecretDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete APP NAME",
		Short: "Delete a stored secret (running deployments keep the version they pinned)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			if err := c.DeleteSecret(cmd.Context(), args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "secret %s: deleted\n", args[1])
			return nil
		},
	}
}

func newSecretAccessCommand() *cobra.Command {
	var envs []string
	var all, previews bool
	cmd := &cobra.Command{
		Use:   "access APP NAME [--env E ...] [--all] [--previews=bool]",
		Short: "Replace which environments (and whether previews) may mount a stored secret",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if all && len(envs) > 0 {
				return fmt.Errorf("--all and --env: grant every environment or list some, not both (access_conflict)")
			}
			if !all && len(envs) == 0 && !cmd.Flags().Changed("previews") {
				return fmt.Errorf("--env, --all or --previews: say what to grant (access_required)")
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			req := api.SecretAccessRequest{Environments: envs}
			if all {
				req.AllEnvironments = &all
			}
			if cmd.Flags().Changed("previews") {
				req.Previews = &previews
			}
			s, err := c.SetSecretAccess(cmd.Context(), args[0], args[1], req)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "secret %s: %s\n", s.Name, accessText(s))
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&envs, "env", nil, "grant only these environments (repeatable)")
	cmd.Flags().BoolVar(&all, "all", false, "grant every environment, including later ones")
	cmd.Flags().BoolVar(&previews, "previews", false, "whether previews may mount it (kept when not given)")
	return cmd
}

func newGeneratedSecretListCommand() *cobra.Command {
	var env string
	cmd := &cobra.Command{
		Use:   "list APP --env ENV",
		Short: "List an environment's generated secrets: names, versions and times (never values)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if env == "" {
				return fmt.Errorf("--env: name the environment (environment_required)")
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			list, err := c.GeneratedSecrets(cmd.Context(), args[0], env)
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "environment %s has no generated secrets yet\n", env)
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tVERSION\tGENERATED\tREGENERATE")
			for _, g := range list {
				pending := ""
				if g.Regenerate {
					pending = "next deployment"
				}
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", g.Name, g.Version, g.GeneratedAt.UTC().Format(time.RFC3339), pending)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&env, "env", "", "environment (required)")
	return cmd
}

// newEnvSecretCommand is `slipway env secret APP --env ENV regenerate NAME`.
func newEnvSecretCommand() *cobra.Command {
	var env string
	cmd := &cobra.Command{
		Use:   "secret APP --env ENV regenerate NAME",
		Short: "Have the environment's next deployment generate a new value for a generated secret",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[1] != "regenerate" {
				return fmt.Errorf("%q: the only action is regenerate (action_unknown)", args[1])
			}
			if env == "" {
				return fmt.Errorf("--env: name the environment (environment_required)")
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			g, err := c.RegenerateSecret(cmd.Context(), args[0], env, args[2])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "generated secret %s in %s: version %d stays until the next deployment generates a new one\n", g.Name, env, g.Version)
			return nil
		},
	}
	cmd.Flags().StringVar(&env, "env", "", "environment (required)")
	return cmd
}
