package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newAppDeleteCommand is `slipway app delete APP --yes`, the dashboard's
// Delete application. It cannot be undone, so it asks for --yes rather
// than prompting, which scripts cannot answer.
func newAppDeleteCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete APP --yes",
		Short: "Delete an application and remove what runs for it; named volumes are retained",
		Long: "Delete an application (by name or id): every environment's services, networks, configs and\n" +
			"secrets are removed by the worker; named volumes are retained.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				return fmt.Errorf("--yes: deleting %s cannot be undone; pass --yes to confirm (confirmation_required)", args[0])
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			if err := c.DeleteApplication(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %s: what ran for it is being removed; named volumes are retained\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the deletion")
	return cmd
}
