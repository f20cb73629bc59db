package backup_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/backupctl"
	"github.com/slipwayhq/slipway/backupctl/backuptest"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// files is how many files the volume's bytes are spread over.
const files = 64

func size() int64 {
	if n, err := strconv.ParseInt(os.Getenv("SLIPWAY_BENCH_BACKUP_BYTES"), 10, 64); err == nil && n > 0 {
		return n
	}
	return 1 << 30
}

// fixture is a deployed environment with its volume filled.
type fixture struct {
	st      *store.Store
	ctl     *backupctl.Controller
	env     store.Environment
	volume  string // the volume's files on this host
	archive string // the target's directory
}

func deploy(tb testing.TB, total int64) fixture {
	ctx := context.Background()
	st := storetest.NewSchema(tb)
	cli := swarmtest.Client(tb)
	id := swarmtest.ID()
	team, err := st.CreateTeam(ctx, "Bench", "bench-"+id)
	check(tb, err)
	swarmtest.RemoveOnCleanup(tb, swarm.LabelTeam+"="+team.ID)
	app, err := st.CreateApplication(ctx, team.ID, "bench-"+id)
	check(tb, err)
	env, err := st.CreateEnvironment(ctx, team.ID, store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production"})
	check(tb, err)
	m, err := manifest.Decode(fmt.Appendf(nil, backuptest.VolumeManifest, swarmtest.Image(tb, "job")), "toml")
	check(tb, err)
	raw, _ := json.Marshal(m)
	rev, err := st.CreateManifestRevision(ctx, team.ID, app.ID, store.RevisionParams{Manifest: raw, Source: "bench"})
	check(tb, err)
	driver := swarm.NewDriver(cli, nil)
	p := &pipeline.Pipeline{Store: st, Driver: driver, Images: image.NewResolver(cli, false)}
	d, err := st.CreateDeployment(ctx, team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: rev.Revision, Origin: store.OriginBuild})
	check(tb, err)
	check(tb, p.Advance(ctx, team.ID, d.ID))
	if d, err = st.GetDeployment(ctx, team.ID, d.ID); err != nil || d.State != store.StateSucceeded {
		tb.Fatalf("deployment %s: %s (%v)", d.State, d.ErrorMessage, err)
	}
	vol, err := cli.VolumeInspect(ctx, swarm.VolumeName(store.ShortID(env.ID), "data"))
	check(tb, err)
	archiver := backuptest.ArchiverImage(tb)
	f := fixture{st: st, env: env, volume: vol.Mountpoint, archive: tb.TempDir()}
	f.ctl = &backupctl.Controller{Store: st, Currents: p, Driver: driver,
		Targets:       &backupctl.Targets{Store: st, Directory: f.archive},
		ArchiverImage: func(context.Context) (string, error) { return archiver, nil },
		SocketDir:     tb.TempDir(), Timeout: time.Hour}
	fill(tb, f.volume, total)
	return f
}

// fill writes total pseudo-random (incompressible) bytes into files.
func fill(tb testing.TB, dir string, total int64) {
	rng := rand.NewChaCha8([32]byte{1})
	for i := range files {
		w, err := os.Create(filepath.Join(dir, fmt.Sprintf("blob-%02d.bin", i)))
		check(tb, err)
		_, err = io.CopyN(w, rng, total/files)
		check(tb, err)
		check(tb, w.Close())
	}
}

// tarDir is the baseline backup: archive/tar of dir into w.
func tarDir(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		if h.Name, err = filepath.Rel(dir, path); err != nil {
			return err
		}
		if err := tw.WriteHeader(h); err != nil || !fi.Mode().IsRegular() {
			return err
		}
		r, err := os.Open(path)
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = io.Copy(tw, r)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// untar is the baseline restore: archive/tar of the archive's regular
// files and directories into dir.
func untar(archive, dir string) error {
	r, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, h.FileInfo().Mode())
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(path string, r io.Reader, mode fs.FileMode) error {
	w, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func timed(tb testing.TB, fn func() error) time.Duration {
	start := time.Now()
	check(tb, fn())
	return time.Since(start)
}

func (f fixture) backup(tb testing.TB) store.Backup {
	ctx := context.Background()
	bk, err := f.st.CreateBackup(ctx, f.env.TeamID, store.BackupParams{ApplicationID: f.env.ApplicationID, EnvironmentID: f.env.ID,
		EnvironmentName: f.env.Name, Kind: manifest.BackupVolume, Subject: "data", Origin: store.ByHand})
	check(tb, err)
	check(tb, f.ctl.Backup(ctx, f.env.TeamID, bk.ID))
	if bk, err = f.st.GetBackup(ctx, f.env.TeamID, bk.ID); err != nil || bk.State != store.BackupSucceeded {
		tb.Fatalf("backup %s: %s (%v)", bk.State, bk.Message, err)
	}
	return bk
}

func (f fixture) restore(tb testing.TB, bk store.Backup) {
	ctx := context.Background()
	r, err := f.st.CreateRestore(ctx, f.env.TeamID, f.env.ID, bk.ID, "bench")
	check(tb, err)
	check(tb, f.ctl.Restore(ctx, f.env.TeamID, r.ID))
	if r, err = f.st.GetRestore(ctx, f.env.TeamID, r.ID); err != nil || r.State != store.RestoreSucceeded {
		tb.Fatalf("restore %s: %s (%v)", r.State, r.Message, err)
	}
}

func run(tb testing.TB) {
	total := size()
	f := deploy(tb, total)
	var bk store.Backup
	tarBackup := timed(tb, func() error { return tarDir(io.Discard, f.volume) })
	backup := timed(tb, func() error { bk = f.backup(tb); return nil })
	out := tb.TempDir()
	tarRestore := timed(tb, func() error { return untar(filepath.Join(f.archive, backupctl.Key(bk)), out) })
	check(tb, os.RemoveAll(out))
	restore := timed(tb, func() error { f.restore(tb, bk); return nil })

	mib := float64(total) / (1 << 20)
	rate := func(d time.Duration) string {
		return fmt.Sprintf("%8s  %7.1f MiB/s", d.Round(time.Millisecond), mib/d.Seconds())
	}
	fmt.Printf("bench/backup: a volume of %.0f MiB in %d files, directory target\n", mib, files)
	fmt.Printf("  slipway backup (archiver container, socket, checksum): %s\n", rate(backup))
	fmt.Printf("  archive/tar of the same directory to /dev/null:        %s\n", rate(tarBackup))
	fmt.Printf("  slipway restore (services stopped and restarted):      %s\n", rate(restore))
	fmt.Printf("  archive/tar extract of the same archive:               %s\n", rate(tarRestore))
	fmt.Printf("  ratios slipway/tar: backup %.2f, restore %.2f\n", backup.Seconds()/tarBackup.Seconds(), restore.Seconds()/tarRestore.Seconds())
}

// BenchmarkBackupRestore prints the figures; one round per b.N.
func BenchmarkBackupRestore(b *testing.B) {
	for range b.N {
		run(b)
	}
}

func check(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
