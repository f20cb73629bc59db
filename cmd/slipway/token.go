package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
)

// newTokenCommand is `slipway token list|create|revoke`, the API tokens
// page's actions (tokens:manage).
func newTokenCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "List, create and revoke the team's API tokens"}
	var scopes []string
	var days int
	create := &cobra.Command{
		Use:   "create NAME --scope S [--scope S ...] [--expires-in-days N]",
		Short: "Create a token with some of your scopes; its secret is printed once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			tok, err := c.CreateToken(cmd.Context(), api.TokenCreateRequest{Name: args[0], Scopes: scopes, ExpiresInSeconds: int64(days) * 86400})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok.Secret)
			return nil
		},
	}
	create.Flags().StringSliceVar(&scopes, "scope", nil, "a scope to grant (repeat): apps:read, apps:write, apps:deploy, ...")
	create.Flags().IntVar(&days, "expires-in-days", 0, "expire after this many days (0: never)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the team's tokens",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			toks, err := c.Tokens(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tSCOPES\tEXPIRES")
			for _, t := range toks.Tokens {
				exp := "never"
				if t.ExpiresAt != nil {
					exp = t.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.ID, t.Name, strings.Join(t.Scopes, ","), exp)
			}
			return w.Flush()
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token: scripts using it stop working",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			if err := c.RevokeToken(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(list, create, revoke)
	return cmd
}
