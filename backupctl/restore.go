package backupctl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// Restore carries out the active restore id: stop the services using the
// data, copy the backup back, start them again. A failure is recorded on
// the restore, which then holds the environment stopped, and is not
// returned; an error is returned only when trying again may help.
func (c *Controller) Restore(ctx context.Context, teamID, id string) error {
	r, err := c.Store.GetRestore(ctx, teamID, id)
	if err != nil {
		return err
	}
	if !r.Active() {
		return nil
	}
	b, err := c.Store.GetBackup(ctx, teamID, r.BackupID)
	if err != nil {
		return err
	}
	if b.State != store.BackupSucceeded {
		return c.endRestore(ctx, r, r.Stopped, failf(CodeBackupUnusable, "backup %s is %s; only a succeeded backup can be restored", b.ID, b.State))
	}
	cur, err := c.Currents.CurrentOf(ctx, teamID, r.EnvironmentID)
	if errors.Is(err, store.ErrNotFound) {
		return c.endRestore(ctx, r, r.Stopped, failf(CodeNotDeployed, "the environment has no successful deployment to restore into"))
	}
	if err != nil {
		return err
	}
	target, err := c.Targets.For(ctx, teamID, b.EnvironmentID)
	if err != nil {
		return c.endRestore(ctx, r, r.Stopped, failf(CodeRestoreFailed, "backup target: %v", err))
	}
	download := func(ctx context.Context, w io.Writer) error {
		rc, err := target.Get(ctx, Key(b))
		if err != nil {
			return err
		}
		defer rc.Close()
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(w, h), rc); err != nil {
			return err
		}
		if sum := hex.EncodeToString(h.Sum(nil)); sum != b.SHA256 {
			return failf(CodeChecksumMismatch, "the archive's SHA-256 is %s, the backup recorded %s", sum, b.SHA256)
		}
		return nil
	}
	stop, runErr := stopSet(cur, b)
	rc := swarm.RunContext{EnvID: cur.Env.ID, EnvShortID: store.ShortID(cur.Env.ID)}
	if runErr == nil {
		rc, runErr = c.runContext(ctx, cur, r.ID, "")
	}
	if runErr == nil {
		runErr = c.restore(ctx, cur, rc, r, b, stop, download)
	}
	if rmErr := c.Driver.RemoveRun(context.WithoutCancel(ctx), rc.Env(), r.ID); rmErr != nil {
		c.log().WarnContext(ctx, "remove restore run", "restore", r.ID, "error", rmErr)
	}
	if runErr != nil && !isFailure(runErr) {
		return runErr
	}
	return c.endRestore(ctx, r, stop, runErr)
}

// stopSet lists the services a restore stops: those mounting the volume,
// or every service but the Postgres server itself.
func stopSet(cur pipeline.Current, b store.Backup) ([]string, error) {
	var stop []string
	switch b.Kind {
	case manifest.BackupVolume:
		if !declaresVolume(cur.Rendered, b.Subject) {
			return nil, failf(CodeSubjectMissing, "the environment's deployment has no volume %q", b.Subject)
		}
		volume := swarm.VolumeName(store.ShortID(cur.Env.ID), b.Subject)
		for _, s := range cur.Desired.Services {
			for _, m := range s.Spec.TaskTemplate.ContainerSpec.Mounts {
				if m.Source == volume && !slices.Contains(stop, s.Service) {
					stop = append(stop, s.Service)
				}
			}
		}
	case manifest.BackupPostgres:
		if _, _, _, err := postgresOf(cur, b.Subject); err != nil {
			return nil, err
		}
		for _, s := range cur.Desired.Services {
			if s.Service != b.Subject {
				stop = append(stop, s.Service)
			}
		}
	default:
		return nil, failf(CodeSubjectMissing, "unknown backup kind %q", b.Kind)
	}
	return stop, nil
}

func (c *Controller) restore(ctx context.Context, cur pipeline.Current, rc swarm.RunContext, r store.Restore, b store.Backup,
	stop []string, download func(context.Context, io.Writer) error) error {
	env := cur.EnvRef()
	if err := c.Store.UpdateRestore(ctx, r.TeamID, r.ID, store.RestoreStopping, stop, ""); err != nil {
		return err
	}
	for _, s := range stop {
		if err := c.Driver.StopService(ctx, env, s); err != nil {
			return err
		}
	}
	if err := c.Store.UpdateRestore(ctx, r.TeamID, r.ID, store.RestoreRestoring, stop, ""); err != nil {
		return err
	}
	volume := swarm.VolumeName(rc.EnvShortID, b.Subject)
	if b.Kind == manifest.BackupPostgres {
		volume = swarm.RunVolumeName(rc.EnvShortID, r.ID)
		if err := c.Driver.EnsureRunObjects(ctx, rc, nil, []string{volume}); err != nil {
			return err
		}
	} else {
		var err error
		if rc, err = c.runContext(ctx, cur, r.ID, volume); err != nil {
			return err
		}
	}
	ep, res, err := c.archiver(ctx, rc, swarm.ArchiveReceive, volume, transfer{download: download})
	if ep != nil {
		if _, dlErr := ep.outcome(); dlErr != nil {
			if isFailure(dlErr) {
				return dlErr
			}
			return failf(CodeRestoreFailed, "read the archive: %v", dlErr)
		}
	}
	if err != nil {
		return runFailed("archiver", res, err)
	}
	if got, _ := ep.outcome(); !got {
		return failf(CodeArchiveMissing, "the archiver exited without receiving the archive")
	}
	if b.Kind == manifest.BackupPostgres {
		pg, svc, password, err := postgresOf(cur, b.Subject)
		if err != nil {
			return err
		}
		job, secrets := swarm.PostgresRun(rc, swarm.PostgresInput{Service: svc, Mode: swarm.PostgresRestore, Database: pg.Database,
			User: pg.User, Port: pg.Port.Or(manifest.DefaultPostgresPort), Password: password, HelperVolume: volume, Timeout: c.timeout()})
		if err := c.Driver.EnsureRunObjects(ctx, rc, secrets, nil); err != nil {
			return err
		}
		if res, err := c.Driver.RunJob(ctx, job); err != nil {
			return runFailed("pg_restore", res, err)
		}
	}
	if err := c.Store.UpdateRestore(ctx, r.TeamID, r.ID, store.RestoreStarting, stop, ""); err != nil {
		return err
	}
	timeout := c.ConvergenceTimeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	for _, name := range stop {
		svc, ok := cur.Desired.Service(name)
		if !ok {
			continue
		}
		if _, err := c.Driver.UpdateService(ctx, svc); err != nil {
			return err
		}
		if err := c.Driver.WaitConverged(ctx, svc, timeout); err != nil {
			return failf(CodeRestoreFailed, "service %s did not start again: %v", name, err)
		}
	}
	return nil
}

func (c *Controller) endRestore(ctx context.Context, r store.Restore, stopped []string, runErr error) error {
	state, msg := store.RestoreSucceeded, ""
	if runErr != nil {
		state = store.RestoreFailed
		msg = runErr.Error()
		if len(stopped) > 0 {
			msg += fmt.Sprintf(" (services %v stay stopped; deploy the environment, or restore again)", stopped)
		}
		c.log().WarnContext(ctx, "restore failed", "restore", r.ID, "error", runErr)
	}
	err := c.Store.UpdateRestore(context.WithoutCancel(ctx), r.TeamID, r.ID, state, stopped, msg)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}
