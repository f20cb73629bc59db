package build

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dockerbuild "github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	rdocker "github.com/slipwayhq/slipway/runtime/docker"
)

// testLabel marks every Docker object these tests create, so cleanup only
// ever touches this run's objects.
const testLabel = "dev.slipway.test-build"

var (
	runID     = randomID()
	serverBin struct {
		once sync.Once
		data []byte
		err  error
	}
)

func randomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// testServerBinary compiles testdata/httpserver as a static binary once.
func testServerBinary(t *testing.T) []byte {
	t.Helper()
	serverBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "slipway-build-bin-")
		if err != nil {
			serverBin.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "server")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./testdata/httpserver")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			serverBin.err = fmt.Errorf("go build: %v: %s", err, msg)
			return
		}
		serverBin.data, serverBin.err = os.ReadFile(out)
	})
	if serverBin.err != nil {
		t.Fatal(serverBin.err)
	}
	return serverBin.data
}

// countingEngine counts ImageBuild calls.
type countingEngine struct {
	Engine
	builds atomic.Int32
}

func (c *countingEngine) ImageBuild(ctx context.Context, r io.Reader, o dockerbuild.ImageBuildOptions) (dockerbuild.ImageBuildResponse, error) {
	c.builds.Add(1)
	return c.Engine.ImageBuild(ctx, r, o)
}

type buildBundle struct {
	docker  *client.Client
	engine  *countingEngine
	builder *Builder
	repo    *testRepo
	co      *Checkout
	owner   Owner
	label   string // this test's value of testLabel
}

const mainDockerfile = `FROM scratch
ARG GREETING=hello
COPY server /server
LABEL greeting=$GREETING
ENV GREETING=$GREETING
ENTRYPOINT ["/server"]
`

func setupBuild(t *testing.T) *buildBundle {
	t.Helper()
	docker, err := rdocker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := docker.Ping(t.Context()); err != nil {
		t.Fatalf("docker is required for build tests: %v", err)
	}
	// Each test has its own label and installation: parallel tests must
	// neither clean up nor garbage-collect each other's images.
	label := runID + "-" + randomID()
	t.Cleanup(func() { cleanupDocker(t, docker, label) })
	installation := "test-build-" + label
	engine := &countingEngine{Engine: docker}
	r := newTestRepo(t, t.TempDir(), "app.git")
	r.write("server", testServerBinary(t), 0o755)
	r.write("Dockerfile", []byte(mainDockerfile), 0o644)
	r.write("Dockerfile.stages", []byte("FROM scratch AS base\nCOPY server /server\nFROM base AS runtime\nENV GREETING=runtime-stage\nENTRYPOINT [\"/server\"]\nFROM base AS debug\nENV GREETING=debug-stage\nENTRYPOINT [\"/server\"]\n"), 0o644)
	r.write("Dockerfile.ctx", []byte("FROM scratch\nCOPY . /ctx\n"), 0o644)
	r.write("Dockerfile.broken", []byte("FROM scratch\nCOPY does-not-exist /x\n"), 0o644)
	r.write("Dockerfile.unknown", []byte("FROM scratch\nFROBNICATE now\n"), 0o644)
	r.write(".dockerignore", []byte("# comment\nsecret.txt\nignored/\n!ignored/keep.txt\nDockerfile.ctx\n**/*.log\n"), 0o644)
	r.write("secret.txt", []byte("secret\n"), 0o644)
	r.write("ignored/drop.txt", []byte("drop\n"), 0o644)
	r.write("ignored/keep.txt", []byte("keep\n"), 0o644)
	r.write("sub/app.log", []byte("log\n"), 0o644)
	r.write("sub/kept.txt", []byte("kept\n"), 0o644)
	r.write("app/index.txt", []byte("app context\n"), 0o644)
	r.write("docker/app.Dockerfile", []byte("FROM scratch\nCOPY . /ctx\n"), 0o644)
	r.symlink("escape.Dockerfile", "../../../../etc/hostname")
	r.symlink("abs.Dockerfile", "/etc/hostname")
	r.symlink("ctx-escape", "../..")
	r.symlink("linked.Dockerfile", "docker/app.Dockerfile")
	r.commit("app")
	co := mustCheckout(t, CheckoutRequest{URL: r.url(), Branch: "main"})
	return &buildBundle{
		docker:  docker,
		engine:  engine,
		builder: &Builder{Engine: engine, Installation: installation},
		repo:    r,
		co:      co,
		owner:   Owner{Team: "team-" + runID, App: "notes", Env: "production"},
		label:   label,
	}
}

func (b *buildBundle) request(dockerfile string) BuildRequest {
	return BuildRequest{
		Checkout:   b.co,
		Dockerfile: dockerfile,
		Owner:      b.owner,
		Labels:     map[string]string{testLabel: b.label},
		Timeout:    2 * time.Minute,
	}
}

func (b *buildBundle) build(t *testing.T, req BuildRequest) *BuildResult {
	t.Helper()
	var out bytes.Buffer
	req.Output = &out
	res, err := b.builder.Build(t.Context(), req)
	if err != nil {
		t.Fatalf("build %s: %v\n%s", req.Dockerfile, err, out.String())
	}
	return res
}

// cleanupDocker removes this run's containers and images.
func cleanupDocker(t *testing.T, docker *client.Client, label string) {
	ctx := context.Background()
	f := filters.NewArgs(filters.Arg("label", testLabel+"="+label))
	containers, _ := docker.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	for _, c := range containers {
		_ = docker.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
	}
	images, _ := docker.ImageList(ctx, image.ListOptions{All: true, Filters: f})
	// Children first: images built FROM another of ours.
	sort.Slice(images, func(i, j int) bool { return images[i].Created > images[j].Created })
	for _, img := range images {
		if _, err := docker.ImageRemove(ctx, img.ID, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil && !strings.Contains(err.Error(), "No such image") {
			t.Logf("cleanup image %s: %v", img.ID, err)
		}
	}
}

// createContainer creates (and optionally starts) a labelled container.
func (b *buildBundle) createContainer(t *testing.T, imageID string, start bool) string {
	t.Helper()
	cfg := &container.Config{Image: imageID, Labels: map[string]string{testLabel: b.label}}
	if !start {
		cfg.Cmd = []string{"/none"} // never run; scratch images without an entrypoint need one
	}
	c, err := b.docker.ContainerCreate(t.Context(), cfg, &container.HostConfig{}, nil, nil, "slipway-test-build-"+randomID())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = b.docker.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
	})
	if start {
		if err := b.docker.ContainerStart(t.Context(), c.ID, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return c.ID
}

// get asks the server in a started container, over the bridge network.
func (b *buildBundle) get(t *testing.T, containerID string) string {
	t.Helper()
	inspect, err := b.docker.ContainerInspect(t.Context(), containerID)
	if err != nil {
		t.Fatal(err)
	}
	var ip string
	for _, n := range inspect.NetworkSettings.Networks {
		ip = n.IPAddress
	}
	if ip == "" {
		t.Fatalf("container %s has no address: %+v", containerID, inspect.State)
	}
	var lastErr error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + ip + ":8080/")
		if err != nil {
			lastErr = err
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.TrimSpace(string(body))
	}
	t.Fatalf("container never answered: %v", lastErr)
	return ""
}

// containerFiles lists the files under dir in a (not started) container.
func (b *buildBundle) containerFiles(t *testing.T, imageID, dir string) []string {
	t.Helper()
	id := b.createContainer(t, imageID, false)
	rc, _, err := b.docker.CopyFromContainer(t.Context(), id, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var names []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag != tar.TypeDir {
			names = append(names, hdr.Name)
		}
	}
	sort.Strings(names)
	return names
}

func TestBuilder_BuildRunsAndReuses(t *testing.T) {
	t.Parallel()
	b := setupBuild(t)

	req := b.request("")
	req.Args = map[string]string{"GREETING": "first"}
	req.Reuse = true
	var out bytes.Buffer
	req.Output = &out
	first, err := b.builder.Build(t.Context(), req)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out.String())
	}
	if first.Reused || !strings.HasPrefix(first.ImageID, "sha256:") || first.Commit != b.co.Commit {
		t.Fatalf("first build = %+v", first)
	}
	if !strings.Contains(out.String(), "COPY server /server") {
		t.Fatalf("build output was not streamed:\n%s", out.String())
	}
	inspect, err := b.docker.ImageInspect(t.Context(), first.ImageID)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		LabelManaged: "true", LabelBuilt: "true", LabelInstallation: b.builder.Installation,
		LabelTeam: b.owner.Team, LabelApp: "notes", LabelEnv: "production",
		LabelSource: first.Identity, LabelCommit: b.co.Commit, "greeting": "first",
	} {
		if got := inspect.Config.Labels[k]; got != v {
			t.Errorf("label %s = %q, want %q", k, got, v)
		}
	}
	if got := b.get(t, b.createContainer(t, first.ImageID, true)); got != "first" {
		t.Fatalf("container answered %q, want first", got)
	}

	builds := b.engine.builds.Load()
	again := b.build(t, req)
	if !again.Reused || again.ImageID != first.ImageID || b.engine.builds.Load() != builds {
		t.Fatalf("unchanged source rebuilt: %+v (ImageBuild calls %d -> %d)", again, builds, b.engine.builds.Load())
	}
	if id, err := b.builder.FindImage(t.Context(), b.owner.Team, first.Identity); err != nil || id != first.ImageID {
		t.Fatalf("FindImage = %q, %v", id, err)
	}
	if id, err := b.builder.FindImage(t.Context(), "another-team", first.Identity); err != nil || id != "" {
		t.Fatalf("FindImage for another team = %q, %v; images are never shared across teams", id, err)
	}

	req.Args = map[string]string{"GREETING": "second"}
	second := b.build(t, req)
	if second.Reused || second.Identity == first.Identity || second.ImageID == first.ImageID || b.engine.builds.Load() != builds+1 {
		t.Fatalf("changed build arg did not rebuild: %+v", second)
	}
	if got := b.get(t, b.createContainer(t, second.ImageID, true)); got != "second" {
		t.Fatalf("container answered %q, want second", got)
	}
}

func TestBuilder_Target(t *testing.T) {
	t.Parallel()
	b := setupBuild(t)
	req := b.request("Dockerfile.stages")
	req.Target = "runtime"
	runtime := b.build(t, req)
	if got := b.get(t, b.createContainer(t, runtime.ImageID, true)); got != "runtime-stage" {
		t.Fatalf("target runtime answered %q", got)
	}
	req.Target = "debug"
	debug := b.build(t, req)
	if debug.Identity == runtime.Identity {
		t.Fatal("target is not part of the source identity")
	}
	if got := b.get(t, b.createContainer(t, debug.ImageID, true)); got != "debug-stage" {
		t.Fatalf("target debug answered %q", got)
	}
	req.Target = "no-such-stage"
	_, err := b.builder.Build(t.Context(), req)
	wantCode(t, err, CodeBuildFailed)
}

func TestBuilder_Dockerignore(t *testing.T) {
	t.Parallel()
	b := setupBuild(t)
	res := b.build(t, b.request("Dockerfile.ctx"))
	got := b.containerFiles(t, res.ImageID, "/ctx")
	has := map[string]bool{}
	for _, n := range got {
		has[strings.TrimPrefix(n, "ctx/")] = true
	}
	for _, want := range []string{"Dockerfile", "server", "ignored/keep.txt", "sub/kept.txt", "app/index.txt", ".dockerignore"} {
		if !has[want] {
			t.Errorf("%s missing from the context; got %v", want, got)
		}
	}
	for _, absent := range []string{"secret.txt", "ignored/drop.txt", "sub/app.log", "Dockerfile.ctx", ".git"} {
		if has[absent] {
			t.Errorf("%s was sent despite .dockerignore; got %v", absent, got)
		}
	}
}

func TestBuilder_DockerfileOutsideContext(t *testing.T) {
	t.Parallel()
	b := setupBuild(t)
	for _, dockerfile := range []string{"docker/app.Dockerfile", "linked.Dockerfile"} {
		req := b.request(dockerfile)
		req.Context = "app"
		res := b.build(t, req)
		got := b.containerFiles(t, res.ImageID, "/ctx")
		if strings.Join(got, ",") != "ctx/index.txt" {
			t.Fatalf("%s: context = %v, want only ctx/index.txt", dockerfile, got)
		}
	}
}

func TestBuilder_Rejects(t *testing.T) {
	t.Parallel()
	b := setupBuild(t)
	tests := []struct {
		name       string
		dockerfile string
		context    string
		args       map[string]string
		code       string
	}{
		{name: "dockerfile climbs out", dockerfile: "../Dockerfile", code: CodeBuildPathInvalid},
		{name: "dockerfile absolute", dockerfile: "/etc/hostname", code: CodeBuildPathInvalid},
		{name: "dockerfile symlink escapes", dockerfile: "escape.Dockerfile", code: CodeBuildPathInvalid},
		{name: "dockerfile absolute symlink", dockerfile: "abs.Dockerfile", code: CodeBuildPathInvalid},
		{name: "dockerfile missing", dockerfile: "nope.Dockerfile", code: CodeBuildPathInvalid},
		{name: "context climbs out", context: "../..", code: CodeBuildPathInvalid},
		{name: "context symlink escapes", context: "ctx-escape", code: CodeBuildPathInvalid},
		{name: "context is a file", context: "secret.txt", code: CodeBuildPathInvalid},
		{name: "arg name", args: map[string]string{"BAD-NAME": "x"}, code: CodeBuildArgInvalid},
		{name: "args too large", args: map[string]string{"BIG": strings.Repeat("x", MaxBuildArgsSize)}, code: CodeBuildArgsTooLarge},
	}
	builds := b.engine.builds.Load()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := b.request(tt.dockerfile)
			req.Context = tt.context
			req.Args = tt.args
			_, err := b.builder.Build(t.Context(), req)
			wantCode(t, err, tt.code)
		})
	}
	if n := b.engine.builds.Load(); n != builds {
		t.Fatalf("rejected requests reached the engine (%d ImageBuild calls)", n-builds)
	}
}

func TestBuilder_BrokenDockerfile(t *testing.T) {
	t.Parallel()
	b := setupBuild(t)
	for _, dockerfile := range []string{"Dockerfile.broken", "Dockerfile.unknown"} {
		var out bytes.Buffer
		req := b.request(dockerfile)
		req.Output = &out
		_, err := b.builder.Build(t.Context(), req)
		wantCode(t, err, CodeBuildFailed)
		var berr *Error
		if !errors.As(err, &berr) || (berr.Output == "" && !strings.Contains(berr.Message, "FROBNICATE")) {
			t.Fatalf("%s: build_failed carries no output: %#v", dockerfile, err)
		}
		t.Logf("%s: %v\noutput:\n%s", dockerfile, err, berr.Output)
	}
}

func TestBuilder_RemoveUnusedImages(t *testing.T) {
	t.Parallel()
	b := setupBuild(t)
	build := func(greeting string) string {
		req := b.request("")
		req.Args = map[string]string{"GREETING": greeting}
		return b.build(t, req).ImageID
	}
	kept, used, unused := build("kept"), build("used"), build("unused")
	// An image of another installation is never touched.
	other := &Builder{Engine: b.docker, Installation: "other-" + b.label}
	req := b.request("")
	req.Args = map[string]string{"GREETING": "other"}
	foreign, err := other.Build(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	containerID := b.createContainer(t, used, false)

	removed, err := b.builder.RemoveUnusedImages(t.Context(), map[string]bool{strings.TrimPrefix(kept, "sha256:"): true})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != unused {
		t.Fatalf("removed %v, want only %s (kept %s, used %s)", removed, unused, kept, used)
	}
	for _, id := range []string{kept, used, foreign.ImageID} {
		if _, err := b.docker.ImageInspect(t.Context(), id); err != nil {
			t.Fatalf("image %s is gone: %v", id, err)
		}
	}
	if _, err := b.docker.ImageInspect(t.Context(), unused); err == nil {
		t.Fatalf("image %s still exists", unused)
	}
	if err := b.docker.ContainerRemove(t.Context(), containerID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	removed, err = b.builder.RemoveUnusedImages(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(removed)
	want := []string{kept, used}
	sort.Strings(want)
	if strings.Join(removed, ",") != strings.Join(want, ",") {
		t.Fatalf("removed %v, want %v", removed, want)
	}
}

func TestBuilder_Timeout(t *testing.T) {
	t.Parallel()
	b := setupBuild(t)
	// Hold the process-wide build slot so the build waits past its budget.
	buildSlot <- struct{}{}
	released := false
	release := func() {
		if !released {
			released = true
			<-buildSlot
		}
	}
	t.Cleanup(release)
	req := b.request("")
	req.Timeout = 300 * time.Millisecond
	builds := b.engine.builds.Load()
	_, err := b.builder.Build(t.Context(), req)
	release()
	wantCode(t, err, CodeBuildTimeout)
	if b.engine.builds.Load() != builds {
		t.Fatal("a build started without the build slot")
	}
}

func TestBuilder_PrepareSource(t *testing.T) {
	t.Parallel()
	b := setupBuild(t)
	base := serveGit(t, filepath.Dir(b.repo.dir), "", "")
	req := SourceRequest{
		URL:     base + "/app.git",
		Branch:  "main",
		Auth:    local,
		Args:    map[string]string{"GREETING": "prepared"},
		Owner:   b.owner,
		Labels:  map[string]string{testLabel: b.label},
		Timeout: 2 * time.Minute,
		Reuse:   true,
	}
	first, err := b.builder.PrepareSource(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Reused || first.Commit != b.co.Commit {
		t.Fatalf("first preparation = %+v", first)
	}
	builds := b.engine.builds.Load()
	again, err := b.builder.PrepareSource(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.ImageID != first.ImageID || b.engine.builds.Load() != builds {
		t.Fatalf("unchanged source was rebuilt: %+v", again)
	}

	// A push moves the branch: the new head is built, with a new identity.
	b.repo.write("NEWS", []byte("pushed\n"), 0o644)
	pushed := b.repo.commit("push")
	moved, err := b.builder.PrepareSource(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if moved.Reused || moved.Commit != pushed || moved.Identity == first.Identity {
		t.Fatalf("moved branch preparation = %+v, want a build of %s", moved, pushed)
	}

	req.Dockerfile = "../outside/Dockerfile"
	_, err = b.builder.PrepareSource(t.Context(), req)
	wantCode(t, err, CodeBuildPathInvalid)
	req.Dockerfile, req.Branch = "", "gone"
	_, err = b.builder.PrepareSource(t.Context(), req)
	wantCode(t, err, CodeBranchNotFound)
}
