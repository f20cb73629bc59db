package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// TestPreview_LocalWorktreeDeploysUncommittedChanges clones the manifest
// repository, switches to a branch that is never pushed, edits the
// manifest without committing and runs `slipway preview deploy --local`
// in the clone: the preview serves the uncommitted manifest through the
// gateway at the snapshot commit, its branch state is local, and the
// clone's status and refs are exactly as they were.
func TestPreview_LocalWorktreeDeploysUncommittedChanges(t *testing.T) {
	t.Parallel()
	bin := slipwayBinary(t)
	cli := swarmtest.Client(t)
	image := swarmtest.Image(t, "web")
	id := swarmtest.ID()
	app := "pl-" + id
	gatewayName := "slipway-gw-pl-" + id
	envs := devCleanup(t, cli, gatewayName)

	repoURL := servePreviewRepo(t, app, image)
	base, token, gwPort := startPreviewDaemon(t, bin, gatewayName)
	var applied struct{}
	api(t, "POST", base+"/api/v1/applications/apply", token, "application/toml", fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[spec.manifest]
path = "slipway.toml"
repository = { url = %q, branch = "main" }
`, app, repoURL), &applied)

	// A clone on a branch of its own, with the manifest edited (no secret,
	// no volume, a VERSION) and an untracked file, none of it committed.
	work := t.TempDir()
	// This process links runtime/build, whose go-git http client dials
	// under the context's outbound policy and refuses loopback without
	// one; the test's own clone runs under dev mode's policy.
	devPolicy := outbound.WithPolicy(context.Background(), outbound.New(outbound.Config{AllowLoopback: true}))
	repo, err := git.PlainCloneContext(devPolicy, work, false, &git.CloneOptions{URL: repoURL})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("agent/wip"), Create: true}); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[spec.previews]
visibility = "public"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
VERSION = "uncommitted"
GIT_SHA = "${{ git.sha }}"
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"

[[spec.routes]]
hostname = "${{ env.slug }}.%s.test"
service = "web"
port = 8080
visibility = "public"
`, app, image, app)
	if err := os.WriteFile(filepath.Join(work, "slipway.toml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("untracked\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Incompressible data makes the bundle larger than the server's usual
	// 1 MiB body limit, which the upload route lifts.
	noise := make([]byte, 3<<20/2)
	_, _ = rand.Read(noise)
	if err := os.WriteFile(filepath.Join(work, "noise.bin"), noise, 0o644); err != nil {
		t.Fatal(err)
	}
	before := worktreeState(t, repo)

	out := cliRunner(t, bin, base, token, work)("preview", "deploy", app, "--local", "--slot", "agent-1", "--wait")
	if !strings.Contains(out, "succeeded") {
		t.Fatalf("slipway preview deploy --local --wait:\n%s", out)
	}
	if after := worktreeState(t, repo); after != before {
		t.Fatalf("the clone changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	type preview struct {
		ID             string `json:"id"`
		Slug           string `json:"slug"`
		Branch         string `json:"branch"`
		Slot           string `json:"slot"`
		BranchState    string `json:"branch_state"`
		SnapshotCommit string `json:"snapshot_commit"`
		SnapshotBase   string `json:"snapshot_base"`
	}
	var list struct {
		Previews []preview `json:"previews"`
	}
	api(t, "GET", base+"/api/v1/applications/"+app+"/previews", token, "", "", &list)
	if len(list.Previews) != 1 {
		t.Fatalf("previews %+v, want one", list.Previews)
	}
	p := list.Previews[0]
	envs.Add(p.ID)
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	if p.Branch != "agent/wip" || p.Slot != "agent-1" || p.BranchState != "local" || p.SnapshotBase != head.Hash().String() || len(p.SnapshotCommit) != 40 {
		t.Fatalf("preview %+v, want agent/wip slot agent-1, local on %s", p, head.Hash())
	}

	host := p.Slug + "." + app + ".test"
	gw := fmt.Sprintf("http://127.0.0.1:%d/", gwPort)
	for path, want := range map[string]string{"version": "uncommitted", "env/GIT_SHA": p.SnapshotCommit} {
		var last string
		deadline := time.Now().Add(60 * time.Second)
		for {
			status, body, err := get(gw+path, host)
			if err == nil && status == http.StatusOK && strings.TrimSpace(body) == want {
				break
			}
			last = fmt.Sprintf("status %d body %q err %v", status, body, err)
			if time.Now().After(deadline) {
				t.Fatalf("GET Host %s /%s never answered %q: last %s", host, path, want, last)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	cliRunner(t, bin, base, token, "")("preview", "delete", app, "--branch", "agent/wip", "--slot", "agent-1", "--yes")
}

// worktreeState is the clone's status and every ref, sorted.
func worktreeState(t *testing.T, repo *git.Repository) string {
	t.Helper()
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	st, err := wt.Status()
	if err != nil {
		t.Fatal(err)
	}
	// One line per file: Status is a map, so its String has no fixed order.
	var lines []string
	for path, fs := range st {
		lines = append(lines, fmt.Sprintf("%c%c %s", fs.Staging, fs.Worktree, path))
	}
	refs, err := repo.References()
	if err != nil {
		t.Fatal(err)
	}
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		lines = append(lines, r.String())
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
