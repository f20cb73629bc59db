// Command slipway is the whole of Slipway in one binary: the control plane
// (serve, worker, dev, migrate), the ingress gateway, and the CLI client.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := newRootCommand().Execute(); err != nil {
		os.Exit(exitCode(err))
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "slipway",
		Short:         "Slipway: a self-hosted platform-as-a-service on Docker Swarm",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(
		newVersionCommand(),
		newAppCommand(),
		newSchemaCommand(),
		newWhoamiCommand(),
		newServeCommand(),
		newWorkerCommand(),
		newDevCommand(),
		newGatewayCommand(),
		newGatewayAgentCommand(),
		newRegistryCommand(),
		newRegistryCredentialCommand(),
		newNodeCommand(),
		newMigrateCommand(),
		newConfigCommand(),
		newAdminCommand(),
		newEnvCommand(),
		newPreviewCommand(),
		newDeploymentCommand(),
		newTokenCommand(),
		newEventsCommand(),
		newArchiveCommand(),
		newNotifyCommand(),
	)
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "slipway", version)
		},
	}
}

// exitError carries a specific exit status, such as 1 for an invalid manifest.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if ee, ok := err.(*exitError); ok {
		return ee.code
	}
	return 1
}
