package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/backup"
)

func newAdminBackupCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Dump the control plane's database to FILE (pg_dump custom format)",
		Long: `Dump every table of the database (Slipway's and River's) to FILE with
pg_dump in its custom format; FILE is created with mode 0600.

Stored and generated secrets are in the dump sealed under the secret key,
which is not: back up secret_key_file (or SLIPWAY_SECRET_KEY) separately and
keep it apart from the dumps. A dump without its key restores everything but
secret values. Needs pg_dump of the server's major version and DATABASE_URL.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := loadConfig(cmd, nil)
			if err != nil {
				return err
			}
			if err := backup.Dump(cmd.Context(), c.DatabaseURL, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "backed up the database to %s; the secret key is not in it: back it up separately\n", args[0])
			return nil
		},
	}
	addConfigFlag(cmd)
	return cmd
}

func newAdminRestoreCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "restore FILE --yes",
		Short: "Replace the control plane's database with a dump made by slipway admin backup",
		Long: `Restore FILE into the database with pg_restore, in one transaction: the
objects the dump holds are dropped and recreated, and a failure leaves the
database as it was. Stop every serve and worker first. Start them again with
the same secret key the dump was made under; serve migrates a dump of an
older version forward at start, and refuses one made by a newer version.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				return fmt.Errorf("restore replaces the database's contents: add --yes to confirm (confirmation_required)")
			}
			c, err := loadConfig(cmd, nil)
			if err != nil {
				return err
			}
			if err := backup.Restore(cmd.Context(), c.DatabaseURL, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored the database from %s; start serve (it migrates forward) with the key the dump was made under\n", args[0])
			return nil
		},
	}
	addConfigFlag(cmd)
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm replacing the database's contents")
	return cmd
}
