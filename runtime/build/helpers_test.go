package build

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/slipwayhq/slipway/outbound"
)

// testRepo is a bare repository on disk with an in-memory worktree, so tests
// commit straight into what the file:// and HTTP servers serve.
type testRepo struct {
	t    testing.TB
	dir  string
	repo *git.Repository
	fs   billy.Filesystem
	when time.Time
}

func newTestRepo(t testing.TB, root, name string) *testRepo {
	t.Helper()
	dir := filepath.Join(root, name)
	if _, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		Bare:        true,
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	}); err != nil {
		t.Fatal(err)
	}
	fs := memfs.New()
	repo, err := git.Open(filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), fs)
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, dir: dir, repo: repo, fs: fs, when: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (r *testRepo) url() string { return "file://" + r.dir }

func (r *testRepo) write(name string, content []byte, perm os.FileMode) {
	r.t.Helper()
	if err := r.fs.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		r.t.Fatal(err)
	}
	f, err := r.fs.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := f.Write(content); err != nil {
		r.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) symlink(name, target string) {
	r.t.Helper()
	if err := r.fs.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := r.fs.Symlink(target, name); err != nil {
		r.t.Fatal(err)
	}
}

// commit commits every change in the worktree and returns the full hash.
func (r *testRepo) commit(msg string) string {
	r.t.Helper()
	w, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		r.t.Fatal(err)
	}
	r.when = r.when.Add(time.Minute)
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: r.when}
	h, err := w.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return h.String()
}

// branch switches the worktree to branch, creating it at HEAD if needed.
func (r *testRepo) branch(name string) {
	r.t.Helper()
	w, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	ref := plumbing.NewBranchReferenceName(name)
	_, err = r.repo.Reference(ref, false)
	create := errors.Is(err, plumbing.ErrReferenceNotFound)
	if err := w.Checkout(&git.CheckoutOptions{Branch: ref, Create: create, Keep: true}); err != nil {
		r.t.Fatal(err)
	}
}

// setConfig sets a raw git config option of the bare repository, e.g.
// uploadpack.allowReachableSHA1InWant for the HTTP server.
func (r *testRepo) setConfig(section, key, value string) {
	r.t.Helper()
	cfg, err := r.repo.Config()
	if err != nil {
		r.t.Fatal(err)
	}
	cfg.Raw.Section(section).SetOption(key, value)
	if err := r.repo.Storer.SetConfig(cfg); err != nil {
		r.t.Fatal(err)
	}
}

const httpBackend = "/usr/lib/git-core/git-http-backend"

// serveGit serves every repository under root over smart HTTP through git's
// own http-backend, optionally behind basic auth. It returns the base URL.
func serveGit(t testing.TB, root, user, password string) string {
	t.Helper()
	if _, err := os.Stat(httpBackend); err != nil {
		t.Fatalf("git http-backend is needed to serve test repositories (scripts/prereqs.sh installs git): %v", err)
	}
	h := &cgi.Handler{
		Path:   httpBackend,
		Root:   "/git",
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
		Stderr: io.Discard, // "not a git repository" for the tests that ask for one
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if user != "" {
			u, p, ok := req.BasicAuth()
			if !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/git"
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := ErrorCode(err); got != code {
		t.Fatalf("error code = %q, want %q (err: %v)", got, code, err)
	}
}

// loopback is slipway dev's outbound policy: the tests' git servers listen
// on 127.0.0.1, which the strict policy refuses (outbound_test.go).
var loopback = outbound.New(outbound.Config{AllowLoopback: true})

// local reads the file:// fixtures: the installation switch that allows
// them is on in these tests (TestAuth_FileURLsNeedTheSwitch tests it off),
// and reaches the loopback git servers.
var local = Auth{AllowFileURLs: true, Outbound: loopback}

func mustCheckout(t testing.TB, req CheckoutRequest) *Checkout {
	t.Helper()
	req.Auth.AllowFileURLs = true
	if req.Auth.Outbound == nil {
		req.Auth.Outbound = loopback
	}
	if req.Dir == "" {
		req.Dir = t.TempDir()
	}
	co, err := CheckoutRepository(t.Context(), req)
	if err != nil {
		t.Fatalf("checkout %s: %v", fmt.Sprint(req.Branch, req.Commit), err)
	}
	t.Cleanup(func() { _ = co.Remove() })
	return co
}

// rawEntry is one entry of a hand-made tree, for trees go-git's worktree
// would refuse to produce (gitlinks, ".." names).
type rawEntry struct {
	name    string
	mode    filemode.FileMode
	content string        // blob content for files and symlinks
	hash    plumbing.Hash // target of a gitlink
}

// commitRawTree commits a single-level tree made of entries onto branch.
func (r *testRepo) commitRawTree(branch string, entries []rawEntry) string {
	r.t.Helper()
	st := r.repo.Storer
	tree := &object.Tree{}
	for _, e := range entries {
		h := e.hash
		if e.mode != filemode.Submodule {
			obj := st.NewEncodedObject()
			obj.SetType(plumbing.BlobObject)
			w, _ := obj.Writer()
			_, _ = w.Write([]byte(e.content))
			_ = w.Close()
			var err error
			if h, err = st.SetEncodedObject(obj); err != nil {
				r.t.Fatal(err)
			}
		}
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: e.name, Mode: e.mode, Hash: h})
	}
	treeObj := st.NewEncodedObject()
	if err := tree.Encode(treeObj); err != nil {
		r.t.Fatal(err)
	}
	treeHash, err := st.SetEncodedObject(treeObj)
	if err != nil {
		r.t.Fatal(err)
	}
	sig := object.Signature{Name: "Test", Email: "test@example.com", When: r.when}
	c := &object.Commit{Author: sig, Committer: sig, Message: "raw", TreeHash: treeHash}
	commitObj := st.NewEncodedObject()
	if err := c.Encode(commitObj); err != nil {
		r.t.Fatal(err)
	}
	h, err := st.SetEncodedObject(commitObj)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := st.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), h)); err != nil {
		r.t.Fatal(err)
	}
	return h.String()
}
