package backupctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// Backup takes the pending (or interrupted) backup id. A failure is
// recorded on the backup, with its code, and is not returned; an error is
// returned only when trying again may help (the store or Docker
// unreachable). Scheduled backups then apply their retention.
func (c *Controller) Backup(ctx context.Context, teamID, id string) error {
	b, err := c.Store.GetBackup(ctx, teamID, id)
	if err != nil {
		return err
	}
	if b.State != store.BackupPending && b.State != store.BackupRunning {
		return nil
	}
	cur, err := c.Currents.CurrentOf(ctx, teamID, b.EnvironmentID)
	if errors.Is(err, store.ErrNotFound) {
		return c.finishBackup(ctx, b, 0, "", failf(CodeNotDeployed, "the environment has no successful deployment to back up"))
	}
	if err != nil {
		return err
	}
	target, err := c.Targets.For(ctx, teamID, b.EnvironmentID)
	if err != nil {
		return c.finishBackup(ctx, b, 0, "", failf(CodeRunFailed, "backup target: %v", err))
	}
	if err := c.Store.StartBackup(ctx, teamID, b.ID, target.Kind(), Key(b), c.now()); err != nil {
		return err
	}
	var size int64
	var sum string
	upload := func(ctx context.Context, r io.Reader) error {
		var err error
		size, sum, err = target.Put(ctx, Key(b), r)
		return err
	}
	rc, runErr := c.runContext(ctx, cur, b.ID, "")
	if runErr == nil {
		runErr = c.take(ctx, cur, rc, b, upload)
	}
	if rmErr := c.Driver.RemoveRun(context.WithoutCancel(ctx), rc.Env(), b.ID); rmErr != nil {
		c.log().WarnContext(ctx, "remove backup run", "backup", b.ID, "error", rmErr)
	}
	if runErr != nil && !isFailure(runErr) {
		return runErr
	}
	if err := c.finishBackup(ctx, b, size, sum, runErr); err != nil || runErr != nil {
		return err
	}
	if b.Origin == store.FromSchedule && b.Name != "" {
		return c.Retain(ctx, cur, b.Name, target)
	}
	return nil
}

// take runs the containers of one backup: the archiver over the volume,
// or pg_dump into a helper volume and the archiver over that.
func (c *Controller) take(ctx context.Context, cur pipeline.Current, rc swarm.RunContext, b store.Backup, upload func(context.Context, io.Reader) error) error {
	volume := ""
	switch b.Kind {
	case manifest.BackupVolume:
		if !declaresVolume(cur.Rendered, b.Subject) {
			return failf(CodeSubjectMissing, "the environment's deployment has no volume %q", b.Subject)
		}
		volume = swarm.VolumeName(rc.EnvShortID, b.Subject)
		var err error
		if rc, err = c.runContext(ctx, cur, b.ID, volume); err != nil {
			return err
		}
	case manifest.BackupPostgres:
		pg, svc, password, err := postgresOf(cur, b.Subject)
		if err != nil {
			return err
		}
		volume = swarm.RunVolumeName(rc.EnvShortID, b.ID)
		job, secrets := swarm.PostgresRun(rc, swarm.PostgresInput{Service: svc, Mode: swarm.PostgresDump, Database: pg.Database,
			User: pg.User, Port: pg.Port.Or(manifest.DefaultPostgresPort), Password: password, HelperVolume: volume, Timeout: c.timeout()})
		if err := c.Driver.EnsureRunObjects(ctx, rc, secrets, []string{volume}); err != nil {
			return err
		}
		if res, err := c.Driver.RunJob(ctx, job); err != nil {
			return runFailed("pg_dump", res, err)
		}
	default:
		return failf(CodeSubjectMissing, "unknown backup kind %q", b.Kind)
	}
	ep, res, err := c.archiver(ctx, rc, swarm.ArchiveSend, volume, transfer{upload: upload})
	if err != nil {
		if ep != nil {
			if _, upErr := ep.outcome(); upErr != nil {
				return failf(CodeRunFailed, "store the archive: %v", upErr)
			}
		}
		return runFailed("archiver", res, err)
	}
	if got, upErr := ep.outcome(); !got {
		return failf(CodeArchiveMissing, "the archiver exited without sending an archive")
	} else if upErr != nil {
		return failf(CodeRunFailed, "store the archive: %v", upErr)
	}
	return nil
}

func declaresVolume(m *manifest.Manifest, name string) bool {
	for _, v := range m.Spec.Volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}

func (c *Controller) finishBackup(ctx context.Context, b store.Backup, size int64, sum string, runErr error) error {
	state, msg := store.BackupSucceeded, ""
	if runErr != nil {
		state, msg = store.BackupFailed, runErr.Error()
		c.log().WarnContext(ctx, "backup failed", "backup", b.ID, "error", runErr)
	}
	ctx = context.WithoutCancel(ctx)
	err := c.Store.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.FinishBackup(ctx, b.TeamID, b.ID, state, size, sum, msg, c.now()); err != nil {
			return err
		}
		if state != store.BackupFailed {
			return nil
		}
		return c.Notify.Emit(ctx, tx, notify.Event{Kind: notify.BackupFailed, TeamID: b.TeamID, ApplicationID: b.ApplicationID,
			EnvironmentID: b.EnvironmentID, Backup: b.Kind + " " + b.Subject + " (" + b.ID + ")", Message: msg, Key: string(notify.BackupFailed) + ":" + b.ID})
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// Retain deletes the scheduled backups of declaration name that its
// keep_last and keep_days no longer keep, newest first; the newest is
// always kept.
func (c *Controller) Retain(ctx context.Context, cur pipeline.Current, name string, target interface {
	Delete(ctx context.Context, key string) error
}) error {
	var decl *manifest.Backup
	for i := range cur.Rendered.Spec.Backups {
		if cur.Rendered.Spec.Backups[i].Name == name {
			decl = &cur.Rendered.Spec.Backups[i]
		}
	}
	if decl == nil {
		return nil
	}
	list, err := c.Store.ListBackups(ctx, cur.Env.TeamID, store.BackupFilter{EnvironmentID: cur.Env.ID, Name: name,
		Origin: store.FromSchedule, State: store.BackupSucceeded, Limit: 1000})
	if err != nil {
		return err
	}
	keepLast := int(decl.KeepLast.Or(manifest.DefaultBackupKeepLast))
	var cutoff time.Time
	if decl.KeepDays != nil {
		cutoff = c.now().Add(-time.Duration(decl.KeepDays.Or(0)) * 24 * time.Hour)
	}
	for _, b := range Expired(list, keepLast, cutoff) {
		if err := target.Delete(ctx, Key(b)); err != nil {
			return fmt.Errorf("retention: delete %s: %w", b.ID, err)
		}
		if err := c.Store.MarkBackupDeleted(ctx, b.TeamID, b.ID, "deleted by retention"); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

// Expired returns the backups of newestFirst that retention deletes: past
// the keepLast newest, or created before cutoff (when not zero). The
// newest is never among them.
func Expired(newestFirst []store.Backup, keepLast int, cutoff time.Time) []store.Backup {
	var out []store.Backup
	for i, b := range newestFirst {
		if i == 0 {
			continue
		}
		if i >= keepLast || !cutoff.IsZero() && b.CreatedAt.Before(cutoff) {
			out = append(out, b)
		}
	}
	return out
}
