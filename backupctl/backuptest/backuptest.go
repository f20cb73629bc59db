// Package backuptest is the test kit of backups and restores: the
// archiver image made of the slipway binary under test, and a Postgres
// image built FROM scratch out of this machine's Debian PostgreSQL
// binaries (no image can be pulled here), so pg_dump and pg_restore run
// for real in the service's own image. Only tests import it.
package backuptest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
)

// PGVersion is the Debian PostgreSQL major version the image is made of.
const PGVersion = "15"

// PGBin is where the binaries sit in the image (on PATH there).
const PGBin = "/usr/lib/postgresql/" + PGVersion + "/bin"

// ArchiverImage returns the image the archiver runs in: the gateway image
// built from the slipway binary under test.
func ArchiverImage(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tag, err := gatewayctl.New(swarmtest.Client(t), nil, "").BuildDevImage(ctx, chaostest.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	return tag
}

var pgMu sync.Mutex

// PostgresImage builds (once per content) the Postgres image: initdb,
// postgres, pg_dump, pg_restore, psql and pg_isready with the libraries
// ldd names, PostgreSQL's share and lib directories, /bin/sh (dash) for
// initdb's popen, and pgserver as
// entrypoint, running as the postgres user (uid 999).
func PostgresImage(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(PGBin + "/postgres"); err != nil {
		t.Skipf("PostgreSQL %s binaries are not installed: %v", PGVersion, err)
	}
	pgMu.Lock()
	defer pgMu.Unlock()
	cli := swarmtest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	files, err := rootfs()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %o %d %d\n", f.name, f.mode, f.uid, len(f.body))
		h.Write(f.body)
	}
	tag := "slipway-test/postgres:" + hex.EncodeToString(h.Sum(nil))[:16]
	if _, err := cli.ImageInspect(ctx, tag); err == nil {
		return tag
	}
	if err := buildImage(ctx, cli, tag, files); err != nil {
		t.Fatal(err)
	}
	return tag
}

type file struct {
	name string
	body []byte
	mode int64
	uid  int
	dir  bool
}

// rootfs lists the image's files.
func rootfs() ([]file, error) {
	var files []file
	seen := map[string]bool{}
	add := func(f file) {
		if !seen[f.name] {
			seen[f.name] = true
			files = append(files, f)
		}
	}
	addFile := func(path string) error {
		b, err := os.ReadFile(path) // follows symlinks: the image gets the library itself
		if err != nil {
			return err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		add(file{name: strings.TrimPrefix(path, "/"), body: b, mode: int64(fi.Mode().Perm())})
		return nil
	}
	addTree := func(root string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			return addFile(p)
		})
	}
	// initdb finds postgres through popen, which needs /bin/sh, as the
	// official image has; Slipway itself never runs a shell.
	tools := []string{PGBin + "/postgres", PGBin + "/initdb", PGBin + "/pg_dump", PGBin + "/pg_restore", PGBin + "/psql", PGBin + "/pg_isready", "/bin/dash"}
	for _, path := range tools {
		if err := addFile(path); err != nil {
			return nil, err
		}
		out, err := exec.Command("ldd", path).Output()
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", path, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			fields := strings.Fields(line)
			for _, f := range fields {
				if strings.HasPrefix(f, "/") {
					if err := addFile(f); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	for _, tree := range []string{"/usr/lib/postgresql/" + PGVersion + "/lib", "/usr/share/postgresql/" + PGVersion} {
		if err := addTree(tree); err != nil {
			return nil, err
		}
	}
	for _, zone := range []string{"/usr/share/zoneinfo/UTC", "/usr/share/zoneinfo/Etc/UTC"} {
		if err := addFile(zone); err != nil {
			return nil, err
		}
	}
	server, err := buildServer()
	if err != nil {
		return nil, err
	}
	add(file{name: "app", body: server, mode: 0o755})
	dash, err := os.ReadFile("/bin/dash")
	if err != nil {
		return nil, err
	}
	add(file{name: "bin/sh", body: dash, mode: 0o755})
	add(file{name: "etc/passwd", body: []byte("root:x:0:0::/root:/nonexistent\npostgres:x:999:999::/var/lib/postgresql:/nonexistent\n"), mode: 0o644})
	add(file{name: "etc/group", body: []byte("root:x:0:\npostgres:x:999:\n"), mode: 0o644})
	add(file{name: "tmp", dir: true, mode: 0o1777})
	add(file{name: "var/lib/postgresql", dir: true, mode: 0o755, uid: 999})
	add(file{name: "var/lib/postgresql/data", dir: true, mode: 0o700, uid: 999})
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, nil
}

// buildServer compiles pgserver statically.
func buildServer() ([]byte, error) {
	_, self, _, _ := runtime.Caller(0)
	dir, err := os.MkdirTemp("", "slipway-pgserver-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "pgserver")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = filepath.Join(filepath.Dir(self), "pgserver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build pgserver: %v\n%s", err, out)
	}
	return os.ReadFile(bin)
}

// buildImage builds FROM scratch with the files ADDed as one tar, which
// keeps their owners and modes.
func buildImage(ctx context.Context, cli *client.Client, tag string, files []file) error {
	var rootTar bytes.Buffer
	tw := tar.NewWriter(&rootTar)
	dirs := map[string]bool{}
	for _, f := range files {
		for d := filepath.Dir(f.name); d != "." && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	var names []string
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return err
		}
	}
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.uid, Size: int64(len(f.body)), Typeflag: tar.TypeReg}
		if f.dir {
			h.Typeflag, h.Name, h.Size = tar.TypeDir, f.name+"/", 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	dockerfile := "FROM scratch\nADD rootfs.tar /\nENV PATH=" + PGBin + " PG_BIN=" + PGBin + " TZ=UTC\nUSER postgres\nENTRYPOINT [\"/app\"]\n"
	var ctxTar bytes.Buffer
	cw := tar.NewWriter(&ctxTar)
	for name, body := range map[string][]byte{"Dockerfile": []byte(dockerfile), "rootfs.tar": rootTar.Bytes()} {
		if err := cw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			return err
		}
		if _, err := cw.Write(body); err != nil {
			return err
		}
	}
	if err := cw.Close(); err != nil {
		return err
	}
	resp, err := cli.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true,
		Labels: map[string]string{swarmtest.LabelKey: "image"}})
	if err != nil {
		return fmt.Errorf("build %s: %w", tag, err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if msg.Error != "" {
			return fmt.Errorf("build %s: %s", tag, msg.Error)
		}
	}
}

// VolumeManifest is an application whose service "app" runs the image
// given by %q (swarmtest's "job" image, sleeping) with the volume "data"
// mounted at /data.
const VolumeManifest = `
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "files"
[[spec.volumes]]
name = "data"
[[spec.services]]
name = "app"
command = ["/app", "--sleep", "3600"]
[spec.services.source]
type = "image"
image = %q
[[spec.services.mounts]]
volume = "data"
target = "/data"
`
