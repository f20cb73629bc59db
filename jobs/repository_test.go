package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// gitRepo is a bare repository served over file://, committed to through
// an in-memory worktree.
type gitRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repository
	fs   billy.Filesystem
	when time.Time
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo.git")
	_, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		Bare: true, InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	must(t, err)
	fs := memfs.New()
	repo, err := git.Open(filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), fs)
	must(t, err)
	return &gitRepo{t: t, dir: dir, repo: repo, fs: fs, when: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
}

func (g *gitRepo) url() string { return "file://" + g.dir }

func (g *gitRepo) write(name string, content []byte, perm os.FileMode) {
	g.t.Helper()
	must(g.t, g.fs.MkdirAll(filepath.Dir(name), 0o755))
	f, err := g.fs.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	must(g.t, err)
	_, err = f.Write(content)
	must(g.t, err)
	must(g.t, f.Close())
}

func (g *gitRepo) remove(name string) {
	g.t.Helper()
	must(g.t, g.fs.Remove(name))
}

func (g *gitRepo) commit(msg string) string {
	g.t.Helper()
	w, err := g.repo.Worktree()
	must(g.t, err)
	must(g.t, w.AddWithOptions(&git.AddOptions{All: true}))
	g.when = g.when.Add(time.Minute)
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: g.when}
	h, err := w.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	must(g.t, err)
	return h.String()
}

// branch switches the worktree to name, creating it at HEAD when missing.
func (g *gitRepo) branch(name string) {
	g.t.Helper()
	w, err := g.repo.Worktree()
	must(g.t, err)
	ref := plumbing.NewBranchReferenceName(name)
	_, err = g.repo.Reference(ref, false)
	must(g.t, w.Checkout(&git.CheckoutOptions{Branch: ref, Create: err != nil, Keep: true}))
}

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
interval_seconds = 1
timeout_seconds = 1
retries = 2

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

// bootstrap saves a bootstrap manifest connecting the application to the
// repository's slipway.toml on branch.
func (b *pipelineBundle) bootstrap(t *testing.T, url, branch string) store.ManifestRevision {
	t.Helper()
	toml := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[spec.manifest]
path = "slipway.toml"
repository = { url = %q, branch = %q }
sync = { mode = "poll", interval_seconds = 60 }
`, b.app.Name, url, branch)
	m, err := manifest.Decode([]byte(toml), "toml")
	must(t, err)
	if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
		t.Fatalf("bootstrap manifest invalid: %v", errs)
	}
	raw, err := json.Marshal(m)
	must(t, err)
	rev, err := b.st.CreateManifestRevision(context.Background(), b.team.ID, b.app.ID, store.RevisionParams{Manifest: raw, Source: toml, Author: "test"})
	must(t, err)
	return rev
}

// request asks for a build deployment of the application's current saved
// manifest in env and advances it.
func (b *pipelineBundle) deployEnv(t *testing.T, env store.Environment) store.Deployment {
	t.Helper()
	ctx := context.Background()
	app, err := b.st.GetApplication(ctx, b.team.ID, b.app.ID)
	must(t, err)
	d, err := b.st.CreateDeployment(ctx, b.team.ID, store.DeploymentParams{
		EnvironmentID: env.ID, Revision: app.CurrentRevision, Origin: store.OriginBuild, Actor: "test",
	})
	must(t, err)
	return b.advance(t, d.ID)
}

func (b *pipelineBundle) envServices(t *testing.T, envID string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, s := range b.servicesOf(t, envID) {
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
	b := setupPipeline(t, "production")
	b.pipeline.AllowFileURLs = true // the fixture repository is file://
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	// The environment follows the manifest's branch and deploys on push.
	_, err := b.st.UpdateEnvironment(ctx, b.team.ID, b.env.ID, store.EnvironmentUpdate{Sync: ptr(true)})
	must(t, err)

	g := newGitRepo(t)
	g.write("slipway.toml", []byte(repoManifest(b.app.Name, web, job, "main-1")), 0o644)
	g.write("conf/app.conf", []byte("greeting = \"from the repository\"\n"), 0o644)
	first := g.commit("first")
	g.branch("next")
	g.write("slipway.toml", []byte(repoManifest(b.app.Name, web, job, "next-1")), 0o644)
	g.commit("next")
	g.branch("main")
	b.bootstrap(t, g.url(), "main")

	// production reads main.
	d := b.deployEnv(t, b.env)
	expectState(t, d, store.StateSucceeded)
	if v := envValue(t, d, "web", "VERSION"); v != "main-1" {
		t.Errorf("production VERSION = %q, want main-1 from branch main", v)
	}
	if v := envValue(t, d, "web", "BRANCH"); v != "main" {
		t.Errorf("git.branch rendered as %q, want main", v)
	}
	f, err := b.st.GetDeploymentFetch(ctx, b.team.ID, d.ID)
	must(t, err)
	if f.Commit != first {
		t.Errorf("fetched commit %s, want %s", f.Commit, first)
	}
	// The path file is mounted with the repository's bytes.
	progress, err := jobs.ParseProgress(d.Steps)
	must(t, err)
	if s := progress.Find("job:show"); s == nil || !strings.Contains(s.Output, `greeting = "from the repository"`) {
		t.Errorf("job output %+v, want the repository file's bytes", s)
	}
	if svcs := b.envServices(t, b.env.ID); !svcs["web"] || !svcs["worker"] {
		t.Fatalf("production services %v, want web and worker", svcs)
	}
	// The fetched manifest became the saved one, authored by the repository.
	app, err := b.st.GetApplication(ctx, b.team.ID, b.app.ID)
	must(t, err)
	rev, err := b.st.GetManifestRevision(ctx, b.team.ID, b.app.ID, app.CurrentRevision)
	must(t, err)
	if rev.Author != jobs.AuthorRepository || !strings.Contains(rev.Source, "main-1") {
		t.Errorf("saved revision %d by %q, want the fetched manifest by %q", rev.Revision, rev.Author, jobs.AuthorRepository)
	}

	// A second environment follows another branch.
	staging, err := b.st.CreateEnvironment(ctx, b.team.ID, store.EnvironmentParams{
		ApplicationID: b.app.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "staging", Branch: "next",
	})
	must(t, err)
	ds := b.deployEnv(t, staging)
	expectState(t, ds, store.StateSucceeded)
	if v := envValue(t, ds, "web", "VERSION"); v != "next-1" {
		t.Errorf("staging VERSION = %q, want next-1 from branch next", v)
	}

	// A push to main with poll sync deploys production exactly once, even
	// when the job runs twice (and once more after the interval).
	g.write("slipway.toml", []byte(repoManifest(b.app.Name, web, job, "main-2")), 0o644)
	second := g.commit("second")
	var mu sync.Mutex
	var enqueued []jobs.DeployArgs
	now := time.Now()
	worker := &jobs.SyncWorker{
		Store: b.st, Lister: &build.Lister{}, AllowFileURLs: true,
		Now: func() time.Time { return now },
		Enqueue: func(_ context.Context, _ *store.Store, args river.JobArgs) error {
			mu.Lock()
			defer mu.Unlock()
			enqueued = append(enqueued, args.(jobs.DeployArgs))
			return nil
		},
	}
	must(t, worker.Work(ctx, &river.Job[jobs.SyncPollArgs]{}))
	must(t, worker.Work(ctx, &river.Job[jobs.SyncPollArgs]{}))
	if len(enqueued) != 1 {
		t.Fatalf("sync requested %d deployments, want exactly 1: %+v", len(enqueued), enqueued)
	}
	now = now.Add(2 * time.Minute) // due again; the head is already requested
	must(t, worker.Work(ctx, &river.Job[jobs.SyncPollArgs]{}))
	if len(enqueued) != 1 {
		t.Fatalf("after the interval sync requested %d deployments, want still 1", len(enqueued))
	}
	synced, err := b.st.GetDeployment(ctx, b.team.ID, enqueued[0].DeploymentID)
	must(t, err)
	if synced.EnvironmentID != b.env.ID || synced.Actor != "sync:poll" {
		t.Errorf("synced deployment env %s actor %q, want production by sync:poll", synced.EnvironmentID, synced.Actor)
	}
	synced = b.advance(t, synced.ID)
	expectState(t, synced, store.StateSucceeded)
	if v := envValue(t, synced, "web", "VERSION"); v != "main-2" {
		t.Errorf("synced VERSION = %q, want main-2", v)
	}
	if f, err := b.st.GetDeploymentFetch(ctx, b.team.ID, synced.ID); err != nil || f.Commit != second {
		t.Errorf("synced fetch %+v (%v), want commit %s", f, err, second)
	}
	now = now.Add(2 * time.Minute)
	must(t, worker.Work(ctx, &river.Job[jobs.SyncPollArgs]{}))
	if len(enqueued) != 1 {
		t.Fatalf("a deployed head was requested again: %d requests", len(enqueued))
	}

	// A missing manifest file fails with manifest_not_found and the
	// running deployment stays.
	g.remove("slipway.toml")
	g.commit("remove the manifest")
	failed := b.deployEnv(t, b.env)
	expectState(t, failed, store.StateFailed)
	if failed.ErrorCode != build.CodeManifestNotFound {
		t.Errorf("error code %q, want %s", failed.ErrorCode, build.CodeManifestNotFound)
	}
	if svcs := b.envServices(t, b.env.ID); !svcs["web"] || !svcs["worker"] {
		t.Errorf("after the failure production runs %v, want web and worker still", svcs)
	}

	// A manifest naming another application fails before anything runs.
	g.write("slipway.toml", []byte(repoManifest("someone-else", web, job, "main-3")), 0o644)
	g.commit("wrong name")
	mismatch := b.deployEnv(t, b.env)
	expectState(t, mismatch, store.StateFailed)
	if mismatch.ErrorCode != jobs.CodeManifestNameMismatch {
		t.Errorf("error code %q, want %s", mismatch.ErrorCode, jobs.CodeManifestNameMismatch)
	}

	// A one-off commit deploys that commit's manifest; the environment
	// keeps following main.
	app, err = b.st.GetApplication(ctx, b.team.ID, b.app.ID)
	must(t, err)
	oneOff, err := b.st.CreateDeployment(ctx, b.team.ID, store.DeploymentParams{
		EnvironmentID: b.env.ID, Revision: app.CurrentRevision, Origin: store.OriginBuild, Actor: "test",
	})
	must(t, err)
	must(t, b.st.SetDeploymentRef(ctx, b.team.ID, oneOff.ID, store.GitRef{Commit: first}))
	oneOff = b.advance(t, oneOff.ID)
	expectState(t, oneOff, store.StateSucceeded)
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
	g := newGitRepo(t)
	g.write("bin/app", staticWebBinary(t), 0o755)
	g.write("Dockerfile", []byte("FROM scratch\nCOPY bin/app /app\nENTRYPOINT [\"/app\"]\n"), 0o644)
	g.write("slipway.toml", []byte(selfBuildManifest(b.app.Name, "self-built")), 0o644)
	commit := g.commit("self")
	b.bootstrap(t, g.url(), "main")

	d := b.deployEnv(t, b.env)
	expectState(t, d, store.StateSucceeded)
	progress, err := jobs.ParseProgress(d.Steps)
	must(t, err)
	prep := progress.Find("prepare")
	if prep == nil || prep.Detail["commit:web"] != commit {
		t.Fatalf("prepare %+v, want web built from commit %s", prep, commit)
	}
	// The service converged through its HTTP health check: the built
	// server answers.
	if svcs := b.envServices(t, b.env.ID); !svcs["web"] {
		t.Fatalf("services %v, want web", svcs)
	}

	// A broken Dockerfile fails the next deployment at preparation; the
	// running service is left exactly as it was.
	before := b.services(t)["web"].Version.Index
	g.write("Dockerfile", []byte("FROM scratch\nCOPY does/not/exist /app\n"), 0o644)
	g.commit("break the build")
	broken := b.deployEnv(t, b.env)
	expectState(t, broken, store.StateFailed)
	if broken.ErrorCode != "build_failed" {
		t.Fatalf("error %s: %s, want build_failed", broken.ErrorCode, broken.ErrorMessage)
	}
	if after := b.services(t)["web"]; after.Version.Index != before {
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
interval_seconds = 1
timeout_seconds = 1
retries = 2
`, app, version)
}

// setupSelfBuild is a pipeline that builds git sources from file://
// repositories, removing its environment and built images on cleanup.
func setupSelfBuild(t *testing.T) *pipelineBundle {
	t.Helper()
	b, _ := setupBuilds(t, "production")
	return b
}

// setupBuilds is setupSelfBuild with its first environment named envName;
// it also returns the installation label value of the images it builds.
func setupBuilds(t *testing.T, envName string) (*pipelineBundle, string) {
	t.Helper()
	b := setupPipeline(t, envName)
	b.pipeline.AllowFileURLs = true // the fixture repository is file://
	cli := swarmtest.Client(t)
	installation := "jobs-test-" + swarmtest.ID()
	b.pipeline.Builds = &build.Builder{Engine: cli, Installation: installation}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// The team's objects go first (the services use the images), then
		// every image this test's installation built.
		if err := swarmtest.RemoveLabelled(ctx, cli, swarm.LabelTeam+"="+b.team.ID); err != nil {
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
