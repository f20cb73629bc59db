package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	slwswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// TestPreview_BranchDeploysThroughGatewayAndDeletesEverything runs
// `slipway dev` with its own gateway against a manifest repository served
// over smart HTTP. It creates the preview of a branch: the first deployment
// is refused because a stored secret it mounts does not allow previews;
// once allowed, the redeployed preview answers through the gateway at its
// slug hostname (from [spec.previews.variables]) with the daemon's preview
// bounds applied. Deleting it removes its services, networks and volume.
func TestPreview_BranchDeploysThroughGatewayAndDeletesEverything(t *testing.T) {
	t.Parallel()
	bin := slipwayBinary(t)
	cli := swarmtest.Client(t)
	image := swarmtest.Image(t, "web")
	id := swarmtest.ID()
	app := "pv-" + id
	gatewayName := "slipway-gw-pv-" + id
	envs := devCleanup(t, cli, gatewayName)

	repoURL := servePreviewRepo(t, app, image)

	base, token, gwPort := startPreviewDaemon(t, bin, gatewayName)
	runCLI := cliRunner(t, bin, base, token, "")

	// The application reads its manifest from the repository's main branch.
	bootstrap := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[spec.manifest]
path = "slipway.toml"
repository = { url = %q, branch = "main" }
`, app, repoURL)
	var applied struct{}
	api(t, "POST", base+"/api/v1/applications/apply", token, "application/toml", bootstrap, &applied)
	// A stored secret the preview mounts, without the previews flag.
	var secret struct{}
	api(t, "PUT", base+"/api/v1/applications/"+app+"/secrets/api-key", token, "application/json", `{"value":"preview-e2e-value"}`, &secret)

	type deployment struct {
		ID           string `json:"id"`
		State        string `json:"state"`
		Terminal     bool   `json:"terminal"`
		ErrorCode    string `json:"error_code"`
		ErrorMessage string `json:"error_message"`
	}
	type preview struct {
		ID          string      `json:"id"`
		Slug        string      `json:"slug"`
		Branch      string      `json:"branch"`
		Created     bool        `json:"created"`
		BranchState string      `json:"branch_state"`
		Warnings    []string    `json:"warnings"`
		Deployment  *deployment `json:"deployment"`
		URLs        []struct {
			Hostname, URL string
		} `json:"urls"`
	}
	wait := func(depID string) deployment {
		t.Helper()
		deadline := time.Now().Add(4 * time.Minute)
		for {
			var d deployment
			api(t, "GET", base+"/api/v1/deployments/"+depID, token, "", "", &d)
			if d.Terminal {
				return d
			}
			if time.Now().After(deadline) {
				t.Fatalf("deployment %s still %s after 4 minutes", depID, d.State)
			}
			time.Sleep(time.Second)
		}
	}

	var created preview
	api(t, "POST", base+"/api/v1/applications/"+app+"/previews", token, "application/json", `{"branch":"feat/Login"}`, &created)
	envID := created.ID
	envs.Add(envID)
	if !created.Created || created.Deployment == nil || !strings.HasPrefix(created.Slug, app+"-feat-login-") || len(created.Slug) > 40 {
		t.Fatalf("created preview %+v, want a new deployed preview with slug %s-feat-login-<hash>", created, app)
	}
	if d := wait(created.Deployment.ID); d.State != "failed" || d.ErrorCode != "secret_access_denied" {
		t.Fatalf("preview deployment with a secret not allowing previews ended %s %s: %s, want failed secret_access_denied", d.State, d.ErrorCode, d.ErrorMessage)
	}
	// Creating it again returns it without deploying.
	var again preview
	api(t, "POST", base+"/api/v1/applications/"+app+"/previews", token, "application/json", `{"branch":"feat/Login"}`, &again)
	if again.Created || again.ID != created.ID || again.Deployment == nil || again.Deployment.ID != created.Deployment.ID {
		t.Fatalf("creating again gave %+v, want the same preview and deployment", again)
	}

	api(t, "PUT", base+"/api/v1/applications/"+app+"/secrets/api-key/access", token, "application/json", `{"previews":true}`, &secret)
	out := runCLI("preview", "deploy", app, "--branch", "feat/Login", "--wait")
	if !strings.Contains(out, "succeeded") {
		t.Fatalf("slipway preview deploy --wait:\n%s", out)
	}

	host := created.Slug + ".pv-" + id + ".test"
	gw := fmt.Sprintf("http://127.0.0.1:%d/", gwPort)
	var last string
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, body, err := get(gw, host)
		if err == nil && status == http.StatusOK && strings.TrimSpace(body) == "ok" {
			break
		}
		last = fmt.Sprintf("status %d body %q err %v", status, body, err)
		if time.Now().After(deadline) {
			t.Fatalf("GET Host %s through the gateway never answered 200 ok: last %s", host, last)
		}
		time.Sleep(500 * time.Millisecond)
	}

	var shown preview
	api(t, "GET", base+"/api/v1/applications/"+app+"/previews/"+created.Slug, token, "", "", &shown)
	if shown.BranchState != "exists" || len(shown.URLs) != 1 || shown.URLs[0].URL != "http://"+host+"/" {
		t.Fatalf("GET preview = %+v, want branch exists and URL http://%s/", shown, host)
	}
	if !strings.Contains(strings.Join(shown.Warnings, "\n"), "spec.services.web.resources.memory_bytes") {
		t.Errorf("preview warnings %q, want the default memory limit", shown.Warnings)
	}
	if u := runCLI("preview", "url", app, "--branch", "feat/Login"); strings.TrimSpace(u) != "http://"+host+"/" {
		t.Errorf("slipway preview url printed %q, want http://%s/", u, host)
	}
	if l := runCLI("preview", "list", app); !strings.Contains(l, created.Slug) || !strings.Contains(l, "exists") {
		t.Errorf("slipway preview list:\n%s", l)
	}
	// The daemon's default memory limit reached the Swarm service.
	ctx := context.Background()
	byEnv := filters.NewArgs(filters.Arg("label", slwswarm.LabelEnv+"="+envID))
	services, err := cli.ServiceList(ctx, swarm.ServiceListOptions{Filters: byEnv})
	if err != nil || len(services) != 1 {
		t.Fatalf("preview services %d (%v), want 1", len(services), err)
	}
	if r := services[0].Spec.TaskTemplate.Resources; r == nil || r.Limits == nil || r.Limits.MemoryBytes != 512<<20 {
		t.Errorf("preview service resources %+v, want the 512 MiB preview default", r)
	}
	vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: byEnv})
	if err != nil || len(vols.Volumes) != 1 {
		t.Fatalf("preview volumes %d (%v), want its data volume", len(vols.Volumes), err)
	}

	runCLI("preview", "delete", app, "--branch", "feat/Login", "--yes")
	deadline = time.Now().Add(3 * time.Minute)
	for {
		var list struct {
			Previews []preview `json:"previews"`
		}
		api(t, "GET", base+"/api/v1/applications/"+app+"/previews", token, "", "", &list)
		if len(list.Previews) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("preview still listed 3 minutes after delete: %+v", list.Previews)
		}
		time.Sleep(time.Second)
	}
	// Gone from the list means gone from the Swarm.
	if s, _ := cli.ServiceList(ctx, swarm.ServiceListOptions{Filters: byEnv}); len(s) != 0 {
		t.Errorf("%d services of the deleted preview remain", len(s))
	}
	if n, _ := cli.NetworkList(ctx, network.ListOptions{Filters: byEnv}); len(n) != 0 {
		t.Errorf("%d networks of the deleted preview remain", len(n))
	}
	if v, _ := cli.VolumeList(ctx, volume.ListOptions{Filters: byEnv}); len(v.Volumes) != 0 {
		t.Errorf("%d volumes of the deleted preview remain", len(v.Volumes))
	}
	if _, err := cli.VolumeInspect(ctx, vols.Volumes[0].Name); err == nil {
		t.Errorf("volume %s of the deleted preview still exists", vols.Volumes[0].Name)
	}
}

// servePreviewRepo commits the application's manifest to main and to
// feat/Login of a bare repository and serves it over smart HTTP through
// git's own http-backend. It returns the repository URL.
func servePreviewRepo(t *testing.T, app, image string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "app.git")
	if _, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		Bare: true, InitOptions: git.InitOptions{DefaultBranch: plumbing.Main},
	}); err != nil {
		t.Fatal(err)
	}
	fs := memfs.New()
	repo, err := git.Open(filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), fs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create("slipway.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(f, previewManifest, app, image); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	w, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	head, err := w.Commit("manifest", &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("feat/Login"), head)); err != nil {
		t.Fatal(err)
	}
	const backend = "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git http-backend serves the test repository (scripts/prereqs.sh installs git): %v", err)
	}
	h := &cgi.Handler{Path: backend, Root: "/git", Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/git/app.git"
}

// previewManifest is the repository's manifest: one web service with a
// volume and a stored secret, routed at a hostname previews take from
// [spec.previews.variables].
const previewManifest = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[spec.variables]
domain = "www.example.test"

[spec.previews]
visibility = "public"

[spec.previews.variables]
domain = "${{ env.slug }}.${{ app.name }}.test"

[[spec.volumes]]
name = "data"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
[[spec.services.mounts]]
volume = "data"
target = "/data"
[[spec.services.secrets]]
name = "api-key"
target = "/run/secrets/api-key"

[[spec.routes]]
hostname = "${{ vars.domain }}"
service = "web"
port = 8080
visibility = "public"
`

// startPreviewDaemon runs `slipway dev` with a gateway of its own on a
// free port and returns the daemon's URL, its bootstrap token and the
// gateway's port.
func startPreviewDaemon(t *testing.T, bin, gatewayName string) (base, token string, gwPort int) {
	t.Helper()
	dir, err := os.MkdirTemp("", "slipway-preview-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	gwPort = freePort(t)
	cmd := exec.Command(bin, "dev", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--bootstrap-token-file", tokenFile)
	cmd.Env = append(withoutEnv(os.Environ(), "DATABASE_URL"),
		"SLIPWAY_IMAGES_PULL=false",
		"SLIPWAY_GATEWAY_NAME="+gatewayName,
		"SLIPWAY_GATEWAY_HTTP_PORT="+strconv.Itoa(gwPort),
		"SLIPWAY_GATEWAY_HTTPS_PORT=0",
	)
	base = startDev(t, cmd, tokenFile)
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	return base, strings.TrimSpace(string(raw)), gwPort
}

// cliRunner runs the CLI against the daemon at base, in dir ("" for the
// test's own), and fails the test when it fails.
func cliRunner(t *testing.T, bin, base, token, dir string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "SLIPWAY_URL="+base, "SLIPWAY_TOKEN="+token)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("slipway %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}
