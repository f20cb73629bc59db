package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
)

// newEnvBranchCommand is `slipway env branch APP ENV BRANCH [--commit SHA]`.
func newEnvBranchCommand() *cobra.Command {
	var commit string
	cmd := &cobra.Command{
		Use:   "branch APP ENV BRANCH",
		Short: "Set the branch (and optionally a pinned commit) an environment reads its repository manifest from",
		Long: `Set the branch an environment of a repository-backed application reads
its manifest and "self" builds from. --commit pins a full commit hash;
without it the environment follows the branch head (and sync deploys its
pushes). Nothing is deployed until the next deployment.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			out, err := c.SetEnvironmentBranch(cmd.Context(), args[0], args[1], api.BranchRequest{Branch: args[2], Commit: commit})
			if err != nil {
				return err
			}
			ref := "follows the head of " + out.Branch
			if out.Commit != "" {
				ref = "is pinned to " + out.Commit + " on " + out.Branch
			}
			fmt.Fprintf(cmd.OutOrStdout(), "environment %s %s\n", out.Environment, ref)
			return nil
		},
	}
	cmd.Flags().StringVar(&commit, "commit", "", "pin this full commit hash instead of following the branch head")
	return cmd
}

// newEnvSyncCommand is `slipway env sync APP ENV on|off`.
func newEnvSyncCommand() *cobra.Command {
	return &cobra.Command{
		Use:       "sync APP ENV on|off",
		Short:     "Turn deploying the followed branch's new heads on or off for an environment",
		Long:      `With sync on, a push (or the periodic check) that moves the branch an environment follows deploys the new head. Refused for an environment whose manifest block sets its source (environment_declared): change the block instead.`,
		Args:      cobra.ExactArgs(3),
		ValidArgs: []string{"on", "off"},
		RunE: func(cmd *cobra.Command, args []string) error {
			on := args[2] == "on"
			if !on && args[2] != "off" {
				return fmt.Errorf("sync takes on or off, not %q", args[2])
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			out, err := c.SetEnvironmentSync(cmd.Context(), args[0], args[1], on)
			if err != nil {
				return err
			}
			state := "off"
			if out.Sync {
				state = "on"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "environment %s: sync %s\n", out.Environment, state)
			return nil
		},
	}
}

// addRefFlags adds `env deploy`'s one-off --branch and --commit.
func addRefFlags(cmd *cobra.Command, ref *api.DeployRequest) {
	cmd.Flags().StringVar(&ref.Branch, "branch", "", "read the repository manifest from this branch, once")
	cmd.Flags().StringVar(&ref.Commit, "commit", "", "read the repository manifest at this full commit hash, once")
	cmd.MarkFlagsMutuallyExclusive("branch", "commit")
}

// deployWithRef requests the deployment, with the one-off ref when given.
func deployWithRef(cmd *cobra.Command, c *client.Client, app, env string, ref api.DeployRequest) (api.Deployment, error) {
	if ref.Branch == "" && ref.Commit == "" {
		return c.Deploy(cmd.Context(), app, env)
	}
	return c.DeployRef(cmd.Context(), app, env, ref)
}

// newAppRepositoryCommand is `slipway app repository reset APP`.
func newAppRepositoryCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "repository",
		Short: "Manage a repository-backed application's saved manifest",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "reset APP",
		Short: "Make the manifest last read from the repository the saved manifest again, discarding edits",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			out, err := c.ResetToRepository(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "saved revision %d: the manifest last read from the repository\n", out.Revision)
			return nil
		},
	})
	return cmd
}
