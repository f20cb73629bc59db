package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/store"
)

// newAdminInstallationAdminCommand is `slipway admin installation-admin`:
// who sees the installation itself (the Swarm's nodes), whatever their
// teams. The installation's first user is one.
func newAdminInstallationAdminCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "installation-admin",
		Short: "List, grant and revoke installation admins (they see the Swarm's nodes in the API, CLI and dashboard)",
	}
	set := func(use, short string, admin bool) *cobra.Command {
		c := &cobra.Command{
			Use:   use + " EMAIL",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				st, done, err := adminStore(cmd)
				if err != nil {
					return err
				}
				defer done()
				u, err := st.GetUserByEmail(cmd.Context(), args[0])
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("no user with the e-mail address %s (user_not_found)", args[0])
				}
				if err != nil {
					return err
				}
				if err := st.SetInstallationAdmin(cmd.Context(), u.ID, admin); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: installation admin %v\n", u.Email, admin)
				return nil
			},
		}
		addConfigFlag(c)
		return c
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the installation admins",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, done, err := adminStore(cmd)
			if err != nil {
				return err
			}
			defer done()
			admins, err := st.ListInstallationAdmins(cmd.Context())
			if err != nil {
				return err
			}
			for _, u := range admins {
				fmt.Fprintln(cmd.OutOrStdout(), u.Email)
			}
			if len(admins) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no installation admin: grant one with slipway admin installation-admin grant EMAIL")
			}
			return nil
		},
	}
	addConfigFlag(list)
	cmd.AddCommand(set("grant", "Make a user an installation admin", true), set("revoke", "Take installation admin from a user", false), list)
	return cmd
}

// adminStore opens the database of the command's configuration.
func adminStore(cmd *cobra.Command) (*store.Store, func(), error) {
	c, err := loadConfig(cmd, nil)
	if err != nil {
		return nil, nil, err
	}
	setLogLevel(c)
	pool, err := openDatabase(cmd.Context(), c.DatabaseURL, newLogger())
	if err != nil {
		return nil, nil, err
	}
	return store.New(pool), pool.Close, nil
}
