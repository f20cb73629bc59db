package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
)

// newEnvLinksCommand is `slipway env links APP ENV`.
func newEnvLinksCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "links APP ENV",
		Short: "List an environment's imports (connected, or why not) and who imports its services",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printLinks(cmd, args[0], args[1])
		},
	}
}

// newAppLinksCommand is `slipway app links APP [--env ENV]`, the same list.
func newAppLinksCommand() *cobra.Command {
	var env string
	cmd := &cobra.Command{
		Use:   "links APP",
		Short: "List an environment's links to other applications",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printLinks(cmd, args[0], env)
		},
	}
	cmd.Flags().StringVar(&env, "env", "production", "the environment")
	return cmd
}

func printLinks(cmd *cobra.Command, app, env string) error {
	c, err := apiClient()
	if err != nil {
		return err
	}
	l, err := c.EnvironmentLinks(cmd.Context(), app, env)
	if err != nil {
		return err
	}
	return writeLinks(cmd.OutOrStdout(), app, env, l)
}

func writeLinks(w io.Writer, app, env string, l api.EnvironmentLinks) error {
	if len(l.Imports) == 0 && len(l.Importers) == 0 {
		fmt.Fprintf(w, "Environment %s of %s has no links (links follow what environments deploy).\n", env, app)
		return nil
	}
	if len(l.Imports) > 0 {
		tw := newTable(w, "IMPORT", "FROM ENVIRONMENT", "STATE", "NAME")
		for _, im := range l.Imports {
			state, name := "connected", im.Name
			switch {
			case im.Reason != "":
				state, name = "not connected: "+im.Message, "-"
			case !im.Connected:
				state = "connecting"
			}
			tw.row(im.Service+" of "+im.Application, im.Environment, state, name)
		}
		if err := tw.flush(); err != nil {
			return err
		}
	}
	if len(l.Importers) > 0 {
		if len(l.Imports) > 0 {
			fmt.Fprintln(w)
		}
		tw := newTable(w, "EXPORTED SERVICE", "IMPORTED BY", "ENVIRONMENT")
		for _, im := range l.Importers {
			tw.row(im.Service, im.Application, im.Environment)
		}
		return tw.flush()
	}
	return nil
}
