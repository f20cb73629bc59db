package backupctl_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/slipwayhq/slipway/backupctl"
	"github.com/slipwayhq/slipway/backupctl/backuptest"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/scheduler"
	"github.com/slipwayhq/slipway/store"
)

type bundle struct {
	*pipelinetest.Bundle
	ctl   *backupctl.Controller
	sched *scheduler.Scheduler
	dir   string
}

// queue runs nothing: tests call Run and Backup themselves.
type queue struct {
	mu   sync.Mutex
	runs []string
}

func (q *queue) RunJob(_ context.Context, _ *store.Store, _, runID string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.runs = append(q.runs, runID)
	return nil
}

func (q *queue) Backup(context.Context, *store.Store, string, string) error { return nil }

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{Bundle: pipelinetest.Setup(t, "production"), dir: t.TempDir()}
	image := backuptest.ArchiverImage(t)
	b.ctl = &backupctl.Controller{
		Store: b.Store, Currents: b.Pipeline, Driver: b.Driver,
		Targets:       &backupctl.Targets{Store: b.Store, Directory: b.dir},
		ArchiverImage: func(context.Context) (string, error) { return image, nil },
		SocketDir:     t.TempDir(),
		Timeout:       3 * time.Minute,
	}
	b.sched = &scheduler.Scheduler{Store: b.Store, Currents: b.Pipeline, Driver: b.Driver, Queue: &queue{}}
	return b
}

func (b *bundle) backup(t *testing.T, env store.Environment, kind, subject string) store.Backup {
	t.Helper()
	bk, err := b.Store.CreateBackup(t.Context(), b.Team.ID, store.BackupParams{ApplicationID: b.App.ID, EnvironmentID: env.ID,
		EnvironmentName: env.Name, Kind: kind, Subject: subject, Origin: store.ByHand})
	must(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	must(t, b.ctl.Backup(ctx, b.Team.ID, bk.ID))
	bk, err = b.Store.GetBackup(t.Context(), b.Team.ID, bk.ID)
	must(t, err)
	if bk.State != store.BackupSucceeded {
		t.Fatalf("backup %s: %s", bk.State, bk.Message)
	}
	return bk
}

func (b *bundle) restore(t *testing.T, env store.Environment, bk store.Backup) store.Restore {
	t.Helper()
	r, err := b.Store.CreateRestore(t.Context(), b.Team.ID, env.ID, bk.ID, "test")
	must(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	must(t, b.ctl.Restore(ctx, b.Team.ID, r.ID))
	r, err = b.Store.GetRestore(t.Context(), b.Team.ID, r.ID)
	must(t, err)
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

const volumeManifest = backuptest.VolumeManifest

// mountpoint is where the volume's files are on this host: the test
// writes and reads them there, beside Slipway.
func mountpoint(t *testing.T, name string) string {
	t.Helper()
	v, err := swarmtest.Client(t).VolumeInspect(t.Context(), name)
	must(t, err)
	return v.Mountpoint
}

// TestBackup_VolumeDeletedAndRestoredByteForByte: a volume is backed up,
// removed with everything on it, and restored into the redeployed
// environment with every byte, mode and link as it was.
func TestBackup_VolumeDeletedAndRestoredByteForByte(t *testing.T) {
	t.Parallel()
	b := setup(t)
	doc := fmt.Sprintf(volumeManifest, swarmtest.Image(t, "job"))
	pipelinetest.ExpectState(t, b.Deploy(t, doc), store.StateSucceeded)
	vol := swarm.VolumeName(store.ShortID(b.Env.ID), "data")
	src := mountpoint(t, vol)
	want := map[string][]byte{"notes.txt": []byte("hello\n"), "deep/a/b/blob.bin": make([]byte, 3<<20+17)}
	_, _ = rand.Read(want["deep/a/b/blob.bin"])
	for name, body := range want {
		must(t, os.MkdirAll(filepath.Join(src, filepath.Dir(name)), 0o755))
		must(t, os.WriteFile(filepath.Join(src, name), body, 0o640))
	}
	must(t, os.Symlink("notes.txt", filepath.Join(src, "link")))

	bk := b.backup(t, b.Env, "volume", "data")
	if bk.SizeBytes < 3<<20 || len(bk.SHA256) != 64 || bk.Target != store.TargetDirectory {
		t.Fatalf("backup = %+v", bk)
	}
	if fi, err := os.Stat(filepath.Join(b.dir, backupctl.Key(bk))); err != nil || fi.Size() != bk.SizeBytes {
		t.Fatalf("archive on the target: %v, %v", fi, err)
	}

	// Delete the volume: remove the environment's services and its volume,
	// then deploy again, which creates the volume empty.
	cli := swarmtest.Client(t)
	env := swarm.EnvRef{ID: b.Env.ID, ShortID: store.ShortID(b.Env.ID)}
	_, err := b.Driver.RemoveEnvironment(t.Context(), env)
	must(t, err)
	// Docker removes the exited containers of removed services only
	// later; they would hold the volume.
	left, err := cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+b.Env.ID))})
	must(t, err)
	for _, c := range left {
		must(t, cli.ContainerRemove(t.Context(), c.ID, container.RemoveOptions{Force: true}))
	}
	_, err = b.Driver.RemoveVolumes(t.Context(), env)
	must(t, err)
	pipelinetest.ExpectState(t, b.Deploy(t, doc+"\n# again\n"), store.StateSucceeded)
	if entries, _ := os.ReadDir(mountpoint(t, vol)); len(entries) != 0 {
		t.Fatalf("the new volume holds %d entries", len(entries))
	}

	r := b.restore(t, b.Env, bk)
	if r.State != store.RestoreSucceeded || len(r.Stopped) != 1 || r.Stopped[0] != "app" {
		t.Fatalf("restore = %+v", r)
	}
	dst := mountpoint(t, vol)
	for name, body := range want {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s: %d bytes back, want %d (err %v)", name, len(got), len(body), err)
		}
		if fi, _ := os.Stat(filepath.Join(dst, name)); fi == nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s mode %v", name, fi)
		}
	}
	if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "notes.txt" {
		t.Errorf("link -> %q, %v", l, err)
	}
	// The service runs again.
	if svc := b.Services(t)["app"]; svc.Spec.Mode.Replicated == nil || *svc.Spec.Mode.Replicated.Replicas != 1 {
		t.Errorf("app replicas after restore: %+v", svc.Spec.Mode)
	}
	// Nothing of the runs is left: no run service, secret or helper volume.
	runs, err := swarmtest.Objects(t.Context(), cli, swarm.LabelRun)
	must(t, err)
	for _, o := range runs {
		if strings.Contains(o.Name, store.ShortID(b.Env.ID)) {
			t.Errorf("left behind: %s", o)
		}
	}
}

// TestRestore_FailedLeavesEnvironmentStopped: an archive that no longer
// matches its checksum fails the restore, which says why and keeps the
// services stopped; a deployment is then how the environment comes back.
func TestRestore_FailedLeavesEnvironmentStopped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	doc := fmt.Sprintf(volumeManifest, swarmtest.Image(t, "job"))
	pipelinetest.ExpectState(t, b.Deploy(t, doc), store.StateSucceeded)
	must(t, os.WriteFile(filepath.Join(mountpoint(t, swarm.VolumeName(store.ShortID(b.Env.ID), "data")), "f"), []byte("one"), 0o644))
	bk := b.backup(t, b.Env, "volume", "data")
	archive := filepath.Join(b.dir, backupctl.Key(bk))
	raw, err := os.ReadFile(archive)
	must(t, err)
	raw[512] ^= 0x20 // the first byte of f's content: the archive still extracts
	must(t, os.WriteFile(archive, raw, 0o600))

	r := b.restore(t, b.Env, bk)
	if r.State != store.RestoreFailed || !strings.Contains(r.Message, backupctl.CodeChecksumMismatch) || !strings.Contains(r.Message, "stay stopped") {
		t.Fatalf("restore = %+v", r)
	}
	if svc := b.Services(t)["app"]; *svc.Spec.Mode.Replicated.Replicas != 0 {
		t.Error("the service runs again after a failed restore")
	}
	// Drift repair leaves the held environment stopped.
	_, err = b.Pipeline.Reconcile(t.Context(), b.Team.ID, mustLatest(t, b).ID)
	must(t, err)
	if svc := b.Services(t)["app"]; *svc.Spec.Mode.Replicated.Replicas != 0 {
		t.Error("drift repair started a service a failed restore stopped")
	}
	pipelinetest.ExpectState(t, b.Deploy(t, doc+"\n# back\n"), store.StateSucceeded)
	if _, err := b.Store.EnvironmentHold(t.Context(), b.Team.ID, b.Env.ID); err == nil {
		t.Error("the environment is still held after a successful deployment")
	}
}

func mustLatest(t *testing.T, b *bundle) store.Deployment {
	t.Helper()
	d, err := b.Store.LatestSucceededDeployment(t.Context(), b.Team.ID, b.Env.ID)
	must(t, err)
	return d
}
