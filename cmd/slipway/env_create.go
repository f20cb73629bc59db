package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
)

// newEnvCreateCommand is `slipway env create APP ENV [--branch BRANCH]`.
func newEnvCreateCommand() *cobra.Command {
	var branch, hostname string
	cmd := &cobra.Command{
		Use:   "create APP ENV",
		Short: "Create an environment the manifest does not declare",
		Long: `Create an environment that deploys the saved manifest (or, for a
repository-backed application, the manifest on --branch, by default the
branch spec.manifest names). Nothing is deployed. A name the manifest
declares is refused with environment_declared: its block creates it.
A route whose hostname is literal would serve the same hostname in every
environment: the new one gets its own (--hostname, or NAME-ENV.domain),
through a variable whose default keeps the others where they are.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			env, err := c.CreateEnvironment(cmd.Context(), args[0], api.EnvironmentCreateRequest{Name: args[1], Branch: branch, Hostname: hostname})
			if err != nil {
				return err
			}
			for _, h := range env.Hostnames {
				fmt.Fprintf(cmd.OutOrStdout(), "%s serves %s (%s is now ${{ vars.%s }}; the other environments keep %s)\n", env.Name, h.Hostname, h.Field, h.Variable, h.Shared)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "environment %s created; deploy it with `slipway env deploy %s %s`\n", env.Name, args[0], env.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&branch, "branch", "", "the branch a repository-backed environment reads its manifest from")
	cmd.Flags().StringVar(&hostname, "hostname", "", "the environment's own hostname for the manifest's one route with a literal hostname")
	return cmd
}

// newEnvRenameCommand is `slipway env rename APP ENV NEW_NAME`.
func newEnvRenameCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rename APP ENV NEW_NAME",
		Short: "Rename an environment the manifest does not declare, keeping what runs",
		Long: `Rename an environment, keeping its deployments, volumes and running
services; nothing is redeployed. Declared environments are renamed by
renaming their block (environment_declared). While the manifest the
environment deploys has a [spec.environments.<name>] block for its current
or new name the rename is refused (environment_configured): remove the
block, rename, then add it back under the new name.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			out, err := c.RenameEnvironment(cmd.Context(), args[0], args[1], args[2])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "environment %s renamed to %s; deploy it to render the new name\n", out.OldName, out.Environment.Name)
			return nil
		},
	}
}
