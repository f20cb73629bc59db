package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/pipeline"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// repoManifest is the manifest the repository holds: a web service and a
// worker mounting conf/app.conf from the repository, and a job printing it.
func repoManifest(app, web, job, version string) string {
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
VERSION = %q
BRANCH = "${{ git.branch }}"
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5

[[spec.services]]
name = "worker"
command = ["/app", "--sleep", "3600"]
[spec.services.source]
type = "image"
image = %q
[[spec.services.files]]
target = "/etc/app/app.conf"
path = "conf/app.conf"

[[spec.jobs]]
name = "show"
service = "worker"
command = ["/app", "--cat", "/etc/app/app.conf"]
`, app, web, version, job)
}

func envServices(t *testing.T, b *pipelinetest.Bundle, envID string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, s := range b.ServicesOf(t, envID) {
		if s.Spec.Labels[swarm.LabelJob] == "" {
			out[s.Spec.Labels[swarm.LabelService]] = true
		}
	}
	return out
}

func envValue(t *testing.T, d store.Deployment, service, key string) string {
	t.Helper()
	m, err := manifest.Decode(d.RenderedManifest, "json")
	must(t, err)
	for _, s := range m.Spec.Services {
		if s.Name == service {
			return s.Environment[key]
		}
	}
	return ""
}

func TestRepository_DeploysBranchesFilesAndSyncsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := pipelinetest.Setup(t, "production")
	b.Pipeline.AllowFileURLs = true // the fixture repository is file://
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	// The environment follows the manifest's branch and deploys on push.
	_, err := b.Store.UpdateEnvironment(ctx, b.Team.ID, b.Env.ID, store.EnvironmentUpdate{Sync: ptr(true)})
	must(t, err)

	g := pipelinetest.NewGitRepo(t)
	g.Write("slipway.toml", []byte(repoManifest(b.App.Name, web, job, "main-1")), 0o644)
	g.Write("conf/app.conf", []byte("greeting = \"from the repository\"\n"), 0o644)
	first := g.Commit("first")
	g.Branch("next")
	g.Write("slipway.toml", []byte(repoManifest(b.App.Name, web, job, "next-1")), 0o644)
	g.Commit("next")
	g.Branch("main")
	b.Bootstrap(t, g.URL(), "main")

	// production reads main.
	d := b.DeployCurrent(t, b.Env)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	if v := envValue(t, d, "web", "VERSION"); v != "main-1" {
		t.Errorf("production VERSION = %q, want main-1 from branch main", v)
	}
	if v := envValue(t, d, "web", "BRANCH"); v != "main" {
		t.Errorf("git.branch rendered as %q, want main", v)
	}
	f, err := b.Store.GetDeploymentFetch(ctx, b.Team.ID, d.ID)
	must(t, err)
	if f.Commit != first {
		t.Errorf("fetched commit %s, want %s", f.Commit, first)
	}
	// The path file is mounted with the repository's bytes.
	progress, err := pipeline.ParseProgress(d.Steps)
	must(t, err)
	if s := progress.Find("job:show"); s == nil || !strings.Contains(s.Output, `greeting = "from the repository"`) {
		t.Errorf("job output %+v, want the repository file's bytes", s)
	}
	if svcs := envServices(t, b, b.Env.ID); !svcs["web"] || !svcs["worker"] {
		t.Fatalf("production services %v, want web and worker", svcs)
	}
	// The fetched manifest became the saved one, authored by the repository.
	app, err := b.Store.GetApplication(ctx, b.Team.ID, b.App.ID)
	must(t, err)
	rev, err := b.Store.GetManifestRevision(ctx, b.Team.ID, b.App.ID, app.CurrentRevision)
	must(t, err)
	if rev.Author != pipeline.AuthorRepository || !strings.Contains(rev.Source, "main-1") {
		t.Errorf("saved revision %d by %q, want the fetched manifest by %q", rev.Revision, rev.Author, pipeline.AuthorRepository)
	}

	// A second environment follows another branch.
	staging, err := b.Store.CreateEnvironment(ctx, b.Team.ID, store.EnvironmentParams{
		ApplicationID: b.App.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "staging", Branch: "next",
	})
	must(t, err)
	ds := b.DeployCurrent(t, staging)
	pipelinetest.ExpectState(t, ds, store.StateSucceeded)
	if v := envValue(t, ds, "web", "VERSION"); v != "next-1" {
		t.Errorf("staging VERSION = %q, want next-1 from branch next", v)
	}

	// A push to main deploys the new head (sync requesting it is
	// jobs.TestSync_DeploysAMovedBranchOnce).
	g.Write("slipway.toml", []byte(repoManifest(b.App.Name, web, job, "main-2")), 0o644)
	second := g.Commit("second")
	moved := b.DeployCurrent(t, b.Env)
	pipelinetest.ExpectState(t, moved, store.StateSucceeded)
	if v := envValue(t, moved, "web", "VERSION"); v != "main-2" {
		t.Errorf("VERSION after the push = %q, want main-2", v)
	}
	if f, err := b.Store.GetDeploymentFetch(ctx, b.Team.ID, moved.ID); err != nil || f.Commit != second {
		t.Errorf("fetch after the push %+v (%v), want commit %s", f, err, second)
	}

	// A missing manifest file fails with manifest_not_found and the
	// running deployment stays.
	g.Remove("slipway.toml")
	g.Commit("remove the manifest")
	failed := b.DeployCurrent(t, b.Env)
	pipelinetest.ExpectState(t, failed, store.StateFailed)
	if failed.ErrorCode != build.CodeManifestNotFound {
		t.Errorf("error code %q, want %s", failed.ErrorCode, build.CodeManifestNotFound)
	}
	if svcs := envServices(t, b, b.Env.ID); !svcs["web"] || !svcs["worker"] {
		t.Errorf("after the failure production runs %v, want web and worker still", svcs)
	}

	// A manifest naming another application fails before anything runs.
	g.Write("slipway.toml", []byte(repoManifest("someone-else", web, job, "main-3")), 0o644)
	g.Commit("wrong name")
	mismatch := b.DeployCurrent(t, b.Env)
	pipelinetest.ExpectState(t, mismatch, store.StateFailed)
	if mismatch.ErrorCode != pipeline.CodeManifestNameMismatch {
		t.Errorf("error code %q, want %s", mismatch.ErrorCode, pipeline.CodeManifestNameMismatch)
	}

	// A one-off commit deploys that commit's manifest; the environment
	// keeps following main.
	app, err = b.Store.GetApplication(ctx, b.Team.ID, b.App.ID)
	must(t, err)
	oneOff, err := b.Store.CreateDeployment(ctx, b.Team.ID, store.DeploymentParams{
		EnvironmentID: b.Env.ID, Revision: app.CurrentRevision, Origin: store.OriginBuild, Actor: "test",
	})
	must(t, err)
	must(t, b.Store.SetDeploymentRef(ctx, b.Team.ID, oneOff.ID, store.GitRef{Commit: first}))
	oneOff = b.Advance(t, oneOff.ID)
	pipelinetest.ExpectState(t, oneOff, store.StateSucceeded)
	if v := envValue(t, oneOff, "web", "VERSION"); v != "main-1" {
		t.Errorf("one-off VERSION = %q, want main-1 from commit %s", v, first)
	}
}

func ptr[T any](v T) *T { return &v }

// staticWebBinary compiles testdata/images/web as a static binary, as a
// repository holding a prebuilt server would.
func staticWebBinary(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "app")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, filepath.Join(swarmtest.ImagesDir(), "web"))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, msg)
	}
	b, err := os.ReadFile(out)
	must(t, err)
	return b
}

func TestRepository_SelfBuildDeploysFetchedCommit(t *testing.T) {
	t.Parallel()
	b := setupSelfBuild(t)
	g := pipelinetest.NewGitRepo(t)
	g.Write("bin/app", staticWebBinary(t), 0o755)
	g.Write("Dockerfile", []byte("FROM scratch\nCOPY bin/app /app\nENTRYPOINT [\"/app\"]\n"), 0o644)
	g.Write("slipway.toml", []byte(selfBuildManifest(b.App.Name, "self-built")), 0o644)
	commit := g.Commit("self")
	b.Bootstrap(t, g.URL(), "main")

	d := b.DeployCurrent(t, b.Env)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	progress, err := pipeline.ParseProgress(d.Steps)
	must(t, err)
	prep := progress.Find("prepare")
	if prep == nil || prep.Detail["commit:web"] != commit {
		t.Fatalf("prepare %+v, want web built from commit %s", prep, commit)
	}
	// The service converged through its HTTP health check: the built
	// server answers.
	if svcs := envServices(t, b, b.Env.ID); !svcs["web"] {
		t.Fatalf("services %v, want web", svcs)
	}

	// A broken Dockerfile fails the next deployment at preparation; the
	// running service is left exactly as it was.
	before := b.Services(t)["web"].Version.Index
	g.Write("Dockerfile", []byte("FROM scratch\nCOPY does/not/exist /app\n"), 0o644)
	g.Commit("break the build")
	broken := b.DeployCurrent(t, b.Env)
	pipelinetest.ExpectState(t, broken, store.StateFailed)
	if broken.ErrorCode != "build_failed" {
		t.Fatalf("error %s: %s, want build_failed", broken.ErrorCode, broken.ErrorMessage)
	}
	if after := b.Services(t)["web"]; after.Version.Index != before {
		t.Fatalf("web changed (version %d -> %d) although the build failed", before, after.Version.Index)
	}
}

// selfBuildManifest is an application whose one service is built from
// the manifest's own repository, with VERSION set to version.
func selfBuildManifest(app, version string) string {
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
[spec.services.source]
type = "git"
repository = "self"
build = { type = "docker" }
[spec.services.environment]
VERSION = %q
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
`, app, version)
}

// setupSelfBuild is a pipeline that builds git sources from file://
// repositories, removing its environment and built images on cleanup.
func setupSelfBuild(t *testing.T) *pipelinetest.Bundle {
	t.Helper()
	b, _ := setupBuilds(t, "production")
	return b
}

// setupBuilds is setupSelfBuild with its first environment named envName;
// it also returns the installation label value of the images it builds.
func setupBuilds(t *testing.T, envName string) (*pipelinetest.Bundle, string) {
	t.Helper()
	b := pipelinetest.Setup(t, envName)
	b.Pipeline.AllowFileURLs = true // the fixture repository is file://
	cli := swarmtest.Client(t)
	installation := "jobs-test-" + swarmtest.ID()
	b.Pipeline.Builds = &build.Builder{Engine: cli, Installation: installation}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// The team's objects go first (the services use the images), then
		// every image this test's installation built.
		if err := swarmtest.RemoveLabelled(ctx, cli, swarm.LabelTeam+"="+b.Team.ID); err != nil {
			t.Logf("cleanup team objects: %v", err)
		}
		imgs, err := cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", build.LabelInstallation+"="+installation))})
		if err != nil {
			t.Logf("cleanup images: %v", err)
		}
		for _, img := range imgs {
			if _, err := cli.ImageRemove(ctx, img.ID, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
				t.Logf("cleanup image %s: %v", img.ID, err)
			}
		}
	})
	return b, installation
}
