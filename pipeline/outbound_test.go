package pipeline_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/store"
)

// serveRepoHTTP serves the fixture repository over smart HTTP on loopback
// through git's http-backend, counting requests.
func serveRepoHTTP(t *testing.T, g *pipelinetest.GitRepo) (string, *atomic.Int32) {
	t.Helper()
	const backend = "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git http-backend serves the test repository (scripts/prereqs.sh installs git): %v", err)
	}
	dir := strings.TrimPrefix(g.URL(), "file://")
	h := &cgi.Handler{Path: backend, Root: "/git", Stderr: io.Discard,
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(dir), "GIT_HTTP_EXPORT_ALL=1"}}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/git/" + filepath.Base(dir), &hits
}

// TestPipeline_GitRemoteOnLoopback runs the same deployment both ways: as
// serve's worker does (no allowance: the strict policy), a git source at
// http://127.0.0.1:…/repo.git fails with destination_not_allowed naming
// the manifest field and the address, with the build never started and
// not one request reaching the server; with slipway dev's policy
// (loopback allowed) the same deployment builds from that server and runs.
func TestPipeline_GitRemoteOnLoopback(t *testing.T) {
	t.Parallel()
	b, _ := setupBuilds(t, "production")
	g := pipelinetest.NewGitRepo(t)
	g.Write("bin/app", staticWebBinary(t), 0o755)
	g.Write("Dockerfile", []byte("FROM scratch\nCOPY bin/app /app\nENTRYPOINT [\"/app\"]\n"), 0o644)
	g.Commit("web")
	url, hits := serveRepoHTTP(t, g)
	m := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
[spec.services.source]
type = "git"
repository = { url = %q, branch = "main" }
[spec.services.source.build]
type = "docker"
`, b.App.Name, url)

	b.Pipeline.Outbound = nil // serve's worker without [security] allowances
	d := b.Deploy(t, m)
	pipelinetest.ExpectState(t, d, store.StateFailed)
	if d.ErrorCode != outbound.Code {
		t.Fatalf("deployment failed with %s (%s), want %s", d.ErrorCode, d.ErrorMessage, outbound.Code)
	}
	for _, want := range []string{"spec.services[0].source.repository.url", "127.0.0.1"} {
		if !strings.Contains(d.ErrorMessage, want) {
			t.Errorf("error %q does not name %s", d.ErrorMessage, want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the refused repository got %d requests", n)
	}

	b.Pipeline.Outbound = outbound.New(outbound.Config{AllowLoopback: true}) // slipway dev
	d = b.Deploy(t, m)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	if hits.Load() == 0 {
		t.Fatal("dev's deployment succeeded without reading the repository over HTTP")
	}
}
