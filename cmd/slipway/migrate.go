package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/store"
)

// newMigrateCommand applies the schema. serve and dev migrate at start too;
// this command is for operators who migrate before rolling out new
// processes, and --check is for deploy scripts and health checks.
func newMigrateCommand() *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply Slipway's and River's database migrations to DATABASE_URL",
		Long: "Apply Slipway's and River's database migrations to the Postgres database named by DATABASE_URL.\n" +
			"Safe to run from several processes at once; refuses a database migrated by a newer Slipway.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, nil)
			if err != nil {
				return err
			}
			return runMigrate(cmd.Context(), cmd, cfg.DatabaseURL, check)
		},
	}
	addConfigFlag(cmd)
	cmd.Flags().BoolVar(&check, "check", false, "only check: exit 1 when migrations are pending or the database is newer than this binary")
	return cmd
}

func runMigrate(ctx context.Context, cmd *cobra.Command, url string, check bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if url == "" {
		return fmt.Errorf("%s is not set: point it at Postgres (postgres://user@host:5432/db)", envDatabaseURL)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("%s: %w", envDatabaseURL, err)
	}
	defer pool.Close()
	ms, err := store.Migrations()
	if err != nil {
		return err
	}
	latest := ms[len(ms)-1]
	if check {
		err := store.CheckSchema(ctx, pool)
		switch {
		case errors.Is(err, store.ErrSchemaOutdated):
			v, _ := store.SchemaVersion(ctx, pool)
			return &exitError{code: 1, err: fmt.Errorf("schema_outdated: database at version %d, this binary applies up to %d; run slipway migrate", v, latest.Version)}
		case err != nil:
			return &exitError{code: 1, err: err}
		}
		fmt.Fprintf(cmd.OutOrStdout(), "database is up to date (version %d, %s)\n", latest.Version, latest.Name)
		return nil
	}
	before, err := store.SchemaVersion(ctx, pool)
	if err != nil {
		return fmt.Errorf("%s: %w", envDatabaseURL, err)
	}
	if err := store.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("%s: %w", envDatabaseURL, err)
	}
	if before == latest.Version {
		fmt.Fprintf(cmd.OutOrStdout(), "database already up to date (version %d, %s)\n", latest.Version, latest.Name)
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "migrated database from version %d to %d (%s)\n", before, latest.Version, latest.Name)
	return nil
}
