package swarmtest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/runtime/docker"
)

// LabelKey marks every Docker object a test creates; its value is unique
// per test so parallel tests (and other packages) never touch each other's
// objects.
const LabelKey = "dev.slipway.test"

// Client returns a client for the local engine and fails the test when the
// engine cannot be reached: these tests are meant to run, not to skip.
func Client(t testing.TB) *client.Client {
	t.Helper()
	cli, err := NewClient()
	if err != nil {
		t.Fatalf("docker: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// NewClient connects to the engine from the environment (DOCKER_HOST or the
// default socket) and checks that it answers.
func NewClient() (*client.Client, error) {
	cli, err := docker.Connect()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("ping engine: %w", err)
	}
	return cli, nil
}

// ID returns a short random identifier, handy for names that must be
// unique across concurrent test runs.
func ID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Label returns a unique value for LabelKey and registers a cleanup that
// removes every service, then network, config, secret and volume carrying
// it. Put map[string]string{swarmtest.LabelKey: value} on what the test
// creates.
func Label(t testing.TB) string {
	t.Helper()
	value := ID()
	cli := Client(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := Remove(ctx, cli, value); err != nil {
			t.Logf("cleanup %s=%s: %v", LabelKey, value, err)
		}
	})
	return value
}

// Remove deletes the objects labelled LabelKey=value (put the label on
// services' ContainerSpec.Labels too, so their tasks can be awaited).
func Remove(ctx context.Context, cli *client.Client, value string) error {
	return RemoveLabelled(ctx, cli, LabelKey+"="+value)
}

// waitTasksExited waits until the containers of the labelled tasks have
// exited, so the objects they used can be removed. (A task filter cannot
// name a service that was just removed, hence the label.)
func waitTasksExited(ctx context.Context, cli *client.Client, f filters.Args) error {
	for {
		tasks, err := cli.TaskList(ctx, swarm.TaskListOptions{Filters: f})
		if err != nil {
			return err
		}
		live := 0
		for _, t := range tasks {
			switch t.Status.State {
			case swarm.TaskStateComplete, swarm.TaskStateShutdown, swarm.TaskStateFailed, swarm.TaskStateRejected, swarm.TaskStateRemove, swarm.TaskStateOrphaned:
			default:
				live++
			}
		}
		if live == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d tasks still running: %w", live, ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// retry repeats a removal while Swarm still reports the object in use.
func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil || cerrdefs.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

var buildMu sync.Mutex

// Image builds the test program testdata/images/<name> into an image FROM
// scratch and returns its tag, slipway-test/<name>:<hash>.
func Image(t testing.TB, name string) string {
	t.Helper()
	cli := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tag, err := BuildImage(ctx, cli, filepath.Join(ImagesDir(), name))
	if err != nil {
		t.Fatalf("build test image %s: %v", name, err)
	}
	return tag
}

// ImagesDir is the absolute path of testdata/images in this repository.
func ImagesDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "images")
}

// BuildImage compiles the Go program in dir (CGO disabled, so it runs in
// an empty image) and builds an image holding only it, at /app, as its
// entrypoint. An image already tagged with the same content hash is reused.
func BuildImage(ctx context.Context, cli *client.Client, dir string) (string, error) {
	hash, err := sourceHash(dir)
	if err != nil {
		return "", err
	}
	tag := "slipway-test/" + filepath.Base(dir) + ":" + hash
	buildMu.Lock()
	defer buildMu.Unlock()
	if _, err := cli.ImageInspect(ctx, tag); err == nil {
		return tag, nil
	}
	tmp, err := os.MkdirTemp("", "slipway-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "app")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w: %s", dir, err, out)
	}
	program, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	dockerfile := "FROM scratch\nCOPY app /app\nENTRYPOINT [\"/app\"]\n"
	context, err := tarFiles(map[string]tarEntry{
		"Dockerfile": {body: []byte(dockerfile), mode: 0o644},
		"app":        {body: program, mode: 0o755},
	})
	if err != nil {
		return "", err
	}
	resp, err := cli.ImageBuild(ctx, context, build.ImageBuildOptions{
		Tags:        []string{tag},
		Remove:      true,
		ForceRemove: true,
		Labels:      map[string]string{LabelKey: "image"},
	})
	if err != nil {
		return "", fmt.Errorf("build %s: %w", tag, err)
	}
	defer resp.Body.Close()
	if err := readBuildStream(resp.Body); err != nil {
		return "", fmt.Errorf("build %s: %w", tag, err)
	}
	return tag, nil
}

// readBuildStream drains the build's progress and returns the error the
// engine reports in it (the HTTP status is 200 even when a build fails).
func readBuildStream(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if msg.Error != "" {
			return errors.New(strings.TrimSpace(msg.Error))
		}
	}
}

// sourceHash covers every file of the program and the toolchain version.
func sourceHash(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("test image source: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version())
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

type tarEntry struct {
	body []byte
	mode int64
}

func tarFiles(files map[string]tarEntry) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: f.mode, Size: int64(len(f.body)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	return &buf, tw.Close()
}
