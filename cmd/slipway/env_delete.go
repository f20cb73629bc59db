package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newEnvDeleteCommand is `slipway env delete APP ENV --yes`. Deleting is
// not undoable (the environment's deployments and secrets go with it), so
// it asks for --yes rather than prompting, which scripts cannot answer.
func newEnvDeleteCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete APP ENV --yes",
		Short: "Delete an environment and remove what runs for it; named volumes are retained",
		Long: "Delete an environment: its services, networks, configs and secrets are removed by the worker,\n" +
			"its named volumes are retained (a preview's are removed). Environments the manifest declares\n" +
			"are deleted by removing their [spec.environments.<name>] block instead.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				return fmt.Errorf("--yes: deleting %s of %s cannot be undone; pass --yes to confirm (confirmation_required)", args[1], args[0])
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			d, err := c.DeleteEnvironment(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), d.Message)
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the deletion")
	return cmd
}
