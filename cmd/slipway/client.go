package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api/client"
)

// apiClient is how every client verb reaches the API: SLIPWAY_URL and
// SLIPWAY_TOKEN, with errors that say which variable to set.
func apiClient() (*client.Client, error) {
	return client.FromEnv()
}

// newWhoamiCommand is `slipway whoami`: which user, team and scopes the
// token in SLIPWAY_TOKEN acts as. It is the quickest check that the CLI is
// set up.
func newWhoamiCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "whoami",
		Aliases: []string{"me"},
		Short:   "Show the user, team and scopes of SLIPWAY_TOKEN",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			me, err := c.Me(cmd.Context())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "user:   %s (%s)\n", me.User.Email, me.User.ID)
			fmt.Fprintf(out, "team:   %s (%s), role %s\n", me.Team.Name, me.Team.Slug, me.Team.Role)
			fmt.Fprintf(out, "token:  %s (%s)\n", me.Token.Name, me.Token.ID)
			fmt.Fprintf(out, "scopes: %s\n", strings.Join(me.Scopes, " "))
			return nil
		},
	}
}
