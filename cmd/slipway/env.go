package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
)

// newEnvCommand is `slipway env`: deploy and restore environments.
func newEnvCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "env",
		Aliases: []string{"environment", "environments"},
		Short:   "Deploy, restore and list an application's environments",
	}
	cmd.AddCommand(newEnvDeployCommand(), newEnvRestoreCommand(), newEnvListCommand(), newEnvRoutesCommand(), newEnvLinksCommand())
	cmd.AddCommand(newEnvSecretCommand())
	cmd.AddCommand(newEnvBranchCommand())
	cmd.AddCommand(newEnvSyncCommand())
	cmd.AddCommand(newEnvDeleteCommand())
	cmd.AddCommand(newEnvRestartCommand(), newEnvScaleCommand(), newEnvLogsCommand()) // env_service.go, env_logs.go
	cmd.AddCommand(newEnvCreateCommand(), newEnvRenameCommand())
	cmd.AddCommand(newEnvVisibilityCommand(), newEnvRollbackCommand(), newEnvTelemetryCommand())
	addPromotionCommands(cmd)
	addDayTwoCommands(cmd)
	return cmd
}

func newEnvDeployCommand() *cobra.Command {
	var ref api.DeployRequest
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "deploy APP ENV",
		Short: "Deploy the application's saved manifest to an environment",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			// --branch/--commit: a one-off ref (env_branch.go).
			d, err := deployWithRef(cmd, c, args[0], args[1], ref)
			if err != nil {
				return err
			}
			return queued(cmd, d, wait, timeout)
		},
	}
	addWaitFlags(cmd, &wait, &timeout)
	addRefFlags(cmd, &ref)
	return cmd
}

func newEnvRestoreCommand() *cobra.Command {
	var wait bool
	var timeout time.Duration
	var deployment string
	cmd := &cobra.Command{
		Use:   "restore APP ENV --deployment ID",
		Short: "Deploy an earlier deployment of the environment again, exactly as it ran",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if deployment == "" {
				return fmt.Errorf("--deployment: name the deployment to restore (deployment_required); `slipway deployment show` and the dashboard list them")
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			src, err := c.Deployment(cmd.Context(), deployment)
			if err != nil {
				return fmt.Errorf("--deployment %s: %w", deployment, err)
			}
			// Refuse a deployment of another environment: restoring it
			// would deploy there, not where the user asked.
			if src.Environment != args[1] || !sameApp(cmd, c, args[0], src.ApplicationID) {
				return fmt.Errorf("--deployment %s belongs to environment %s of another application or environment, not %s %s (deployment_environment_mismatch)",
					deployment, src.Environment, args[0], args[1])
			}
			d, err := c.RestoreDeployment(cmd.Context(), deployment)
			if err != nil {
				return err
			}
			return queued(cmd, d, wait, timeout)
		},
	}
	cmd.Flags().StringVar(&deployment, "deployment", "", "the deployment to restore (required)")
	addWaitFlags(cmd, &wait, &timeout)
	return cmd
}

func newEnvListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list APP",
		Short: "List an application's environments and their latest deployment",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			envs, err := c.Environments(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			tw := newTable(cmd.OutOrStdout(), "NAME", "LATEST DEPLOYMENT", "STATE", "REVISION")
			for _, e := range envs {
				id, state, rev := "-", "never deployed", "-"
				if d := e.LatestDeployment; d != nil {
					id, state, rev = d.ID, d.State, fmt.Sprint(d.Revision)
				}
				tw.row(e.Name, id, state, rev)
			}
			return tw.flush()
		},
	}
}

func addWaitFlags(cmd *cobra.Command, wait *bool, timeout *time.Duration) {
	cmd.Flags().BoolVar(wait, "wait", false, "follow the deployment until it ends; exit non-zero when it fails")
	addTimeoutFlag(cmd, timeout)
}

// queued reports a queued deployment and follows it when asked.
func queued(cmd *cobra.Command, d api.Deployment, wait bool, timeout time.Duration) error {
	fmt.Fprintf(cmd.OutOrStdout(), "deployment %s of %s queued\n", d.ID, d.Environment)
	if !wait {
		fmt.Fprintf(cmd.OutOrStdout(), "follow it with: slipway deployment wait %s\n", d.ID)
		return nil
	}
	c, err := apiClient()
	if err != nil {
		return err
	}
	return waitDeployments(cmd.Context(), c, cmd.OutOrStdout(), timeout, d.ID)
}
