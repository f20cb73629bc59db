package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

// newEnvRestartCommand is `slipway env restart APP ENV SERVICE`, the
// Overview's Restart: a forced rolling update of a running service.
func newEnvRestartCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "restart APP ENV SERVICE",
		Short: "Restart a running service's replicas, one at a time, with the same spec",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			if err := c.RestartService(cmd.Context(), args[0], args[1], args[2]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restart of %s in %s queued: Swarm replaces its replicas one at a time\n", args[2], args[1])
			return nil
		},
	}
}

// newEnvScaleCommand is `slipway env scale APP ENV SERVICE N`, the
// Overview's Scale: replicas saved as a manifest field edit (the
// environment's variable when replicas references one), then a deployment
// of the environment.
func newEnvScaleCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "scale APP ENV SERVICE REPLICAS",
		Short: "Set how many replicas a service runs and deploy the environment",
		Args:  cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.ParseInt(args[3], 10, 64)
			if err != nil {
				return fmt.Errorf("REPLICAS: %q is not a whole number (replicas_invalid)", args[3])
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			res, err := c.ScaleService(cmd.Context(), args[0], args[1], args[2], n)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			where := "spec.services." + args[2] + ".replicas"
			if res.Variable != "" {
				where = "variable " + res.Variable + " of " + args[1]
			}
			fmt.Fprintf(out, "revision %d sets %s to %d\n", res.Revision, where, n)
			if res.Deployment != nil {
				fmt.Fprintf(out, "deployment %s of %s requested\n", res.Deployment.ID, args[1])
			}
			return nil
		},
	}
}
