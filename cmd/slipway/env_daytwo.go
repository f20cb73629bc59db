package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
)

// addDayTwoCommands adds scheduled jobs, backups and restores to `env`.
func addDayTwoCommands(env *cobra.Command) {
	env.AddCommand(newEnvSchedulesCommand(), newEnvRunJobCommand(), newEnvBackupsCommand(), newEnvBackupCommand(),
		newEnvRestoreBackupCommand(), newEnvBackupTargetCommand())
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.DateTime)
}

// newEnvSchedulesCommand is `slipway env schedules APP ENV`.
func newEnvSchedulesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "schedules APP ENV",
		Short: "List scheduled jobs and backups with their next run, and the latest job runs",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			s, err := c.Schedules(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			tw := newTable(cmd.OutOrStdout(), "KIND", "NAME", "SCHEDULE (UTC)", "NEXT RUN", "LAST RUN")
			for _, sc := range s.Schedules {
				tw.row(sc.Kind, sc.Name, sc.Schedule, when(&sc.NextRunAt), when(sc.LastRunAt))
			}
			if err := tw.flush(); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout())
			tw = newTable(cmd.OutOrStdout(), "RUN", "JOB", "ORIGIN", "STATE", "STARTED", "ENDED", "EXIT", "MESSAGE")
			for _, r := range s.Runs {
				exit := "-"
				if r.ExitCode != nil {
					exit = fmt.Sprint(*r.ExitCode)
				}
				tw.row(r.ID, r.Job, r.Origin, r.State, when(r.StartedAt), when(r.EndedAt), exit, r.Message)
			}
			return tw.flush()
		},
	}
}

// newEnvRunJobCommand is `slipway env run-job APP ENV JOB`.
func newEnvRunJobCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "run-job APP ENV JOB",
		Short: "Run a scheduled job now (needs apps:deploy)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			r, err := c.RunJob(cmd.Context(), args[0], args[1], args[2])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Run %s of %s queued; see `slipway env schedules %s %s`.\n", r.ID, r.Job, args[0], args[1])
			return nil
		},
	}
}

// newEnvBackupsCommand is `slipway env backups APP ENV`.
func newEnvBackupsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "backups APP ENV",
		Short: "List an environment's backups (size, checksum, origin, state) and restores",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			b, err := c.Backups(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if b.Held != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "Stopped by restore %s (%s): %s\n\n", b.Held.ID, b.Held.State, b.Held.Message)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Target: %s\n", b.Target)
			tw := newTable(cmd.OutOrStdout(), "BACKUP", "WHAT", "ORIGIN", "STATE", "SIZE", "SHA-256", "TAKEN", "MESSAGE")
			for _, bk := range b.Backups {
				sum := bk.SHA256
				if len(sum) > 12 {
					sum = sum[:12]
				}
				tw.row(bk.ID, bk.Kind+" "+bk.Subject, bk.Origin, bk.State, fmt.Sprint(bk.SizeBytes), sum, when(&bk.CreatedAt), bk.Message)
			}
			if err := tw.flush(); err != nil {
				return err
			}
			for _, r := range b.Restores {
				fmt.Fprintf(cmd.OutOrStdout(), "restore %s of %s: %s %s\n", r.ID, r.BackupID, r.State, r.Message)
			}
			return nil
		},
	}
}

// newEnvBackupCommand is `slipway env backup APP ENV --volume NAME|--service NAME`.
func newEnvBackupCommand() *cobra.Command {
	var req api.BackupRequest
	cmd := &cobra.Command{
		Use:   "backup APP ENV (--volume NAME | --service NAME)",
		Short: "Back up a volume, or a Postgres service with pg_dump, now (needs apps:deploy)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			b, err := c.CreateBackup(cmd.Context(), args[0], args[1], req)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Backup %s of %s %s queued; see `slipway env backups %s %s`.\n", b.ID, b.Kind, b.Subject, args[0], args[1])
			return nil
		},
	}
	cmd.Flags().StringVar(&req.Volume, "volume", "", "volume to archive")
	cmd.Flags().StringVar(&req.Service, "service", "", "Postgres service to dump")
	return cmd
}

// newEnvRestoreBackupCommand is `slipway env restore-backup APP ENV BACKUP`.
func newEnvRestoreBackupCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "restore-backup APP ENV BACKUP",
		Short: "Restore a backup of the application into ENV, stopping the services that use the data (needs apps:deploy)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			r, err := c.Restore(cmd.Context(), args[0], args[1], args[2])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Restore %s queued; see `slipway env backups %s %s`.\n", r.ID, args[0], args[1])
			return nil
		},
	}
}

// newEnvBackupTargetCommand is `slipway env backup-target APP ENV ...`.
func newEnvBackupTargetCommand() *cobra.Command {
	var req api.BackupTargetRequest
	var secretFile string
	cmd := &cobra.Command{
		Use:   "backup-target APP ENV --endpoint HOST:PORT --bucket NAME --access-key-id ID --secret-access-key-file FILE",
		Short: "Send an environment's backups to an S3-compatible bucket (needs secrets:write)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if secretFile == "" {
				return errors.New("--secret-access-key-file is required")
			}
			b, err := os.ReadFile(secretFile)
			if err != nil {
				return err
			}
			req.SecretAccessKey = strings.TrimSpace(string(b))
			c, err := apiClient()
			if err != nil {
				return err
			}
			if err := c.SetBackupTarget(cmd.Context(), args[0], args[1], req); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Backups of %s go to s3 %s/%s from now on.\n", args[1], req.Endpoint, req.Bucket)
			return nil
		},
	}
	cmd.Flags().StringVar(&req.Endpoint, "endpoint", "", "host[:port] of the S3 endpoint")
	cmd.Flags().StringVar(&req.Bucket, "bucket", "", "bucket")
	cmd.Flags().StringVar(&req.Prefix, "prefix", "", "key prefix in the bucket")
	cmd.Flags().StringVar(&req.Region, "region", "", "region")
	cmd.Flags().BoolVar(&req.Insecure, "insecure", false, "plain HTTP (a store on a private network)")
	cmd.Flags().StringVar(&req.AccessKeyID, "access-key-id", "", "access key id")
	cmd.Flags().StringVar(&secretFile, "secret-access-key-file", "", "file holding the secret access key")
	return cmd
}
