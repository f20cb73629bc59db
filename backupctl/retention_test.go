package backupctl_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/backupctl"
	"github.com/slipwayhq/slipway/backupstore"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// retentionManifest keeps three nightly backups by count, and hourly ones
// for two days by age.
const retentionManifest = volumeManifest + `
[[spec.backups]]
name = "nightly"
volume = "data"
schedule = "@daily"
keep_last = 3
[[spec.backups]]
name = "hourly"
volume = "data"
schedule = "@hourly"
keep_last = 10
keep_days = 2
`

// seed records a finished backup of the volume whose archive is on the
// target (a failed one has none), as an earlier run would have left it.
func (b *bundle) seed(t *testing.T, target backupstore.Target, name, origin, state string) store.Backup {
	t.Helper()
	ctx := t.Context()
	bk, err := b.Store.CreateBackup(ctx, b.Team.ID, store.BackupParams{ApplicationID: b.App.ID, EnvironmentID: b.Env.ID,
		EnvironmentName: b.Env.Name, Kind: "volume", Subject: "data", Name: name, Origin: origin})
	must(t, err)
	must(t, b.Store.StartBackup(ctx, b.Team.ID, bk.ID, target.Kind(), backupctl.Key(bk), time.Now()))
	var size int64
	var sum string
	if state == store.BackupSucceeded {
		size, sum, err = target.Put(ctx, backupctl.Key(bk), strings.NewReader("archive of "+bk.ID))
		must(t, err)
	}
	must(t, b.Store.FinishBackup(ctx, b.Team.ID, bk.ID, state, size, sum, "", time.Now()))
	bk, err = b.Store.GetBackup(ctx, b.Team.ID, bk.ID)
	must(t, err)
	return bk
}

// expectKept checks the state of every backup of the environment and that
// the target holds exactly the archives of the live ones.
func (b *bundle) expectKept(t *testing.T, step string, live, deleted []store.Backup) {
	t.Helper()
	all, err := b.Store.ListBackups(t.Context(), b.Team.ID, store.BackupFilter{EnvironmentID: b.Env.ID, Limit: 1000})
	must(t, err)
	gone, err := b.Store.ListBackups(t.Context(), b.Team.ID, store.BackupFilter{EnvironmentID: b.Env.ID, State: store.BackupDeleted, Limit: 1000})
	must(t, err)
	ids := func(list []store.Backup) []string {
		var out []string
		for _, bk := range list {
			out = append(out, bk.ID)
		}
		slices.Sort(out)
		return out
	}
	if got, want := ids(all), ids(live); !slices.Equal(got, want) {
		t.Errorf("%s: backups not deleted = %v, want %v", step, got, want)
	}
	if got, want := ids(gone), ids(deleted); !slices.Equal(got, want) {
		t.Errorf("%s: backups deleted = %v, want %v", step, got, want)
	}
	for _, bk := range gone {
		if bk.Message != "deleted by retention" {
			t.Errorf("%s: %s deleted with message %q", step, bk.ID, bk.Message)
		}
	}
	var wantFiles []string
	for _, bk := range all {
		if bk.State == store.BackupSucceeded {
			wantFiles = append(wantFiles, backupctl.Key(bk))
		}
	}
	slices.Sort(wantFiles)
	var files []string
	must(t, filepath.WalkDir(b.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(b.dir, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	}))
	if !slices.Equal(files, wantFiles) {
		t.Errorf("%s: archives on the target = %v, want %v", step, files, wantFiles)
	}
}

// TestRetention_DeletesOnlyWhatItShould: a scheduled backup taken on the
// real Swarm applies keep_last to its declaration's scheduled, succeeded
// backups only; keep_days then deletes by age, and the newest is kept even
// when it is past the age. Rows and archives on the directory target are
// checked one by one.
func TestRetention_DeletesOnlyWhatItShould(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pipelinetest.ExpectState(t, b.Deploy(t, fmt.Sprintf(retentionManifest, swarmtest.Image(t, "job"))), store.StateSucceeded)
	ctx := t.Context()
	target, err := b.ctl.Targets.For(ctx, b.Team.ID, b.Env.ID)
	must(t, err)

	// Oldest first: four scheduled nightly backups, one taken by hand and
	// one failed, and an hourly one.
	var nightly []store.Backup
	for range 4 {
		nightly = append(nightly, b.seed(t, target, "nightly", store.FromSchedule, store.BackupSucceeded))
	}
	byHand := b.seed(t, target, "nightly", store.ByHand, store.BackupSucceeded)
	failed := b.seed(t, target, "nightly", store.FromSchedule, store.BackupFailed)
	hourly := []store.Backup{b.seed(t, target, "hourly", store.FromSchedule, store.BackupSucceeded)}

	// A real scheduled backup: with it, five nightly ones; keep_last = 3
	// deletes the two oldest.
	bk, err := b.Store.CreateBackup(ctx, b.Team.ID, store.BackupParams{ApplicationID: b.App.ID, EnvironmentID: b.Env.ID,
		EnvironmentName: b.Env.Name, Kind: "volume", Subject: "data", Name: "nightly", Origin: store.FromSchedule})
	must(t, err)
	runCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	must(t, b.ctl.Backup(runCtx, b.Team.ID, bk.ID))
	newest, err := b.Store.GetBackup(ctx, b.Team.ID, bk.ID)
	must(t, err)
	if newest.State != store.BackupSucceeded {
		t.Fatalf("scheduled backup %s: %s", newest.State, newest.Message)
	}
	live := []store.Backup{newest, nightly[3], nightly[2], byHand, failed, hourly[0]}
	deleted := []store.Backup{nightly[0], nightly[1]}
	b.expectKept(t, "keep_last", live, deleted)

	// By age: cutoff at the third hourly backup deletes the two before it.
	for range 3 {
		hourly = append(hourly, b.seed(t, target, "hourly", store.FromSchedule, store.BackupSucceeded))
	}
	cur, err := b.Pipeline.CurrentOf(ctx, b.Team.ID, b.Env.ID)
	must(t, err)
	b.ctl.Now = func() time.Time { return hourly[2].CreatedAt.Add(48 * time.Hour) }
	must(t, b.ctl.Retain(ctx, cur, "hourly", target))
	live = []store.Backup{newest, nightly[3], nightly[2], byHand, failed, hourly[2], hourly[3]}
	deleted = append(deleted, hourly[0], hourly[1])
	b.expectKept(t, "keep_days", live, deleted)

	// Every hourly backup is past the age: the newest stays.
	b.ctl.Now = func() time.Time { return hourly[3].CreatedAt.Add(30 * 24 * time.Hour) }
	must(t, b.ctl.Retain(ctx, cur, "hourly", target))
	live = []store.Backup{newest, nightly[3], nightly[2], byHand, failed, hourly[3]}
	deleted = append(deleted, hourly[2])
	b.expectKept(t, "keep_days past the newest", live, deleted)
}
