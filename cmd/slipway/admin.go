package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// newAdminCommand is `slipway admin`: operator maintenance run against the
// database directly (not through the API).
func newAdminCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Operator maintenance on the database: first owner, team quotas, secret key rotation, backup and restore",
	}
	cmd.AddCommand(newAdminRotateKeyCommand(), newAdminCreateOwnerCommand(), newAdminTeamCommand())
	cmd.AddCommand(newAdminBackupCommand(), newAdminRestoreCommand())
	cmd.AddCommand(newAdminInstallationAdminCommand())
	return cmd
}

func newAdminRotateKeyCommand() *cobra.Command {
	var newKeyFile string
	cmd := &cobra.Command{
		Use:   "rotate-key [--new-key-file FILE]",
		Short: "Re-encrypt every stored and generated secret under a new key-encryption key",
		Long: `Re-encrypt every stored and generated secret value, of every team, that is
not sealed under the new key. With --new-key-file, the new key is the first
key in FILE and the configured keys (secret_key_file / SLIPWAY_SECRET_KEY)
open the old values; without it, the configured key file's first key is the
new one and its other lines are the old keys.

Running processes open values with their own keys, so roll a rotation out
in three steps: put the new key first and the old one second in the key
file and restart serve and worker; run this command; then remove the old
line. It is safe to run again: values already under the new key are left
alone. Needs DATABASE_URL.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := loadConfig(cmd, nil)
			if err != nil {
				return err
			}
			setLogLevel(c)
			kr, err := keyring.Load(keyringConfig(c))
			if err != nil {
				return err
			}
			if newKeyFile != "" {
				b, err := os.ReadFile(newKeyFile)
				if err != nil {
					return fmt.Errorf("--new-key-file: %w", err)
				}
				next, err := keyring.Parse(b)
				if err != nil {
					return fmt.Errorf("--new-key-file %s: %w", newKeyFile, err)
				}
				kr = keyring.Merge(next, kr)
			}
			logger := newLogger()
			pool, err := openDatabase(ctx, c.DatabaseURL, logger)
			if err != nil {
				return err
			}
			defer pool.Close()
			st := store.New(pool)
			n, err := secrets.New(st, kr).RotateKey(ctx)
			if err != nil {
				return fmt.Errorf("rotate-key: %d values re-encrypted before: %w", n, err)
			}
			counts, err := st.CountSealedByKey(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			values := "values"
			if n == 1 {
				values = "value"
			}
			fmt.Fprintf(out, "re-encrypted %d %s under key %s\n", n, values, kr.CurrentID())
			fmt.Fprintf(out, "values by key: %s\n", formatCounts(counts))
			if newKeyFile != "" {
				fmt.Fprintf(out, "next: make %s the first key of secret_key_file (%s) and restart serve and worker\n",
					newKeyFile, keyring.EnvKeyFile)
			}
			return nil
		},
	}
	addConfigFlag(cmd)
	cmd.Flags().StringVar(&newKeyFile, "new-key-file", "", "file holding the new key (64 hex digits, base64 or 32 raw bytes)")
	return cmd
}

func formatCounts(counts map[string]int) string {
	if len(counts) == 0 {
		return "none"
	}
	ids := make([]string, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s: %d", id, counts[id])
	}
	return strings.Join(parts, ", ")
}
