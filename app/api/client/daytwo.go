package client

import (
	"context"
	"net/http"

	"github.com/slipwayhq/slipway/app/api"
)

// Schedules lists an environment's schedules and latest job runs.
func (c *Client) Schedules(ctx context.Context, app, env string) (api.Schedules, error) {
	var out api.Schedules
	return out, c.Do(ctx, http.MethodGet, appPath(app, "environments", env, "schedules"), nil, &out)
}

// RunJob runs a scheduled job now.
func (c *Client) RunJob(ctx context.Context, app, env, job string) (api.JobRun, error) {
	var out api.JobRun
	return out, c.Do(ctx, http.MethodPost, appPath(app, "environments", env, "jobs", job, "runs"), nil, &out)
}

// Backups lists an environment's backups and restores.
func (c *Client) Backups(ctx context.Context, app, env string) (api.Backups, error) {
	var out api.Backups
	return out, c.Do(ctx, http.MethodGet, appPath(app, "environments", env, "backups"), nil, &out)
}

// CreateBackup backs up a volume or a Postgres service now.
func (c *Client) CreateBackup(ctx context.Context, app, env string, req api.BackupRequest) (api.Backup, error) {
	var out api.Backup
	return out, c.sendJSON(ctx, http.MethodPost, appPath(app, "environments", env, "backups"), http.Header{}, req, &out)
}

// Restore restores a backup of the application into env.
func (c *Client) Restore(ctx context.Context, app, env, backup string) (api.Restore, error) {
	var out api.Restore
	return out, c.sendJSON(ctx, http.MethodPost, appPath(app, "environments", env, "restores"), http.Header{}, api.RestoreRequest{Backup: backup}, &out)
}

// SetBackupTarget sends env's backups to an S3-compatible bucket.
func (c *Client) SetBackupTarget(ctx context.Context, app, env string, req api.BackupTargetRequest) error {
	return c.sendJSON(ctx, http.MethodPut, appPath(app, "environments", env, "backup-target"), http.Header{}, req, nil)
}
