package build_test

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/slipwayhq/slipway/outbound"
	rbuild "github.com/slipwayhq/slipway/runtime/build"
)

// shape is the generated repository's size.
type shape struct {
	textFiles int // small source-like files, unchanged after the first commit
	binFiles  int // binary-ish files rewritten by every commit
	binSize   int
	commits   int
}

var (
	// full: 2,000 files; 20 × 256 KiB random blobs × 10 commits ≈ 50 MB of history.
	full  = shape{textFiles: 1980, binFiles: 20, binSize: 256 << 10, commits: 10}
	small = shape{textFiles: 190, binFiles: 10, binSize: 32 << 10, commits: 4}
)

type fixture struct {
	dir     string // bare repository
	httpURL string
	commit  string
}

// makeRepo builds the bare repository with go-git, then packs it with the
// git CLI so both sides read the same packfile.
func makeRepo(tb testing.TB, root string, s shape) *fixture {
	tb.Helper()
	dir := filepath.Join(root, "bench.git")
	if _, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{Bare: true, InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}}); err != nil {
		tb.Fatal(err)
	}
	fs := memfs.New()
	repo, err := git.Open(filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), fs)
	if err != nil {
		tb.Fatal(err)
	}
	w, err := repo.Worktree()
	if err != nil {
		tb.Fatal(err)
	}
	write := func(name string, data []byte) {
		_ = fs.MkdirAll(filepath.Dir(name), 0o755)
		f, err := fs.Create(name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
	for i := range s.textFiles {
		write(fmt.Sprintf("src/pkg%02d/file%04d.go", i%40, i), fmt.Appendf(nil, "package pkg%02d\n\n// File %d.\nvar V%d = %q\n", i%40, i, i, make([]byte, 900)))
	}
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var head plumbing.Hash
	for c := range s.commits {
		for i := range s.binFiles {
			blob := make([]byte, s.binSize)
			_, _ = rand.Read(blob)
			write(fmt.Sprintf("assets/blob%02d.bin", i), blob)
		}
		if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
			tb.Fatal(err)
		}
		when = when.Add(time.Hour)
		sig := &object.Signature{Name: "Bench", Email: "bench@example.com", When: when}
		head, err = w.Commit(fmt.Sprintf("commit %d", c), &git.CommitOptions{Author: sig, Committer: sig})
		if err != nil {
			tb.Fatal(err)
		}
	}
	gitCLI(tb, "-C", dir, "repack", "-adq")
	gitCLI(tb, "-C", dir, "config", "uploadpack.allowReachableSHA1InWant", "true")

	h := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend", Root: "/git",
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.Handler(h))
	tb.Cleanup(srv.Close)
	return &fixture{dir: dir, httpURL: srv.URL + "/git/bench.git", commit: head.String()}
}

func gitCLI(tb testing.TB, args ...string) {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+os.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func historySize(tb testing.TB, dir string) int64 {
	var total int64
	_ = filepath.Walk(filepath.Join(dir, "objects"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	return total
}

// compare times one runtime/build checkout and one git CLI shallow clone
// of the same commit over url.
func compare(tb testing.TB, url, commit string) (ours, cli time.Duration) {
	tb.Helper()
	work := tb.TempDir()
	start := time.Now()
	co, err := rbuild.CheckoutRepository(tb.Context(), rbuild.CheckoutRequest{URL: url, Branch: "main", Dir: work, Auth: rbuild.Auth{AllowFileURLs: true, Outbound: outbound.New(outbound.Config{AllowLoopback: true})}})
	ours = time.Since(start)
	if err != nil {
		tb.Fatal(err)
	}
	if co.Commit != commit {
		tb.Fatalf("checked out %s, want %s", co.Commit, commit)
	}
	_ = co.Remove()

	dst := filepath.Join(work, "cli")
	start = time.Now()
	gitCLI(tb, "clone", "--quiet", "--depth", "1", "--branch", "main", "--no-tags", url, dst)
	cli = time.Since(start)
	_ = os.RemoveAll(dst)
	return ours, cli
}

func report(tb testing.TB, name string, ours, cli time.Duration) {
	tb.Logf("%-5s runtime/build %8.1f ms   git clone --depth 1 %8.1f ms   ratio %.2fx (target <= 1.5x)",
		name, float64(ours.Microseconds())/1000, float64(cli.Microseconds())/1000, float64(ours)/float64(cli))
}

// TestCheckoutAgainstGitCLI is the short variant make test runs: a small
// repository, numbers printed with -v, nothing asserted about time.
func TestCheckoutAgainstGitCLI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the git CLI is the yardstick and is not installed")
	}
	f := makeRepo(t, t.TempDir(), small)
	t.Logf("repository: %d files, %.1f MB of history", small.textFiles+small.binFiles, float64(historySize(t, f.dir))/1e6)
	for _, tr := range []struct{ name, url string }{{"file", "file://" + f.dir}, {"http", f.httpURL}} {
		ours, cli := compare(t, tr.url, f.commit)
		report(t, tr.name, ours, cli)
	}
}

func BenchmarkCheckout(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("the git CLI is the yardstick and is not installed")
	}
	// A parent benchmark with sub-benchmarks runs once, so the repository
	// is generated once.
	start := time.Now()
	fullFixture := makeRepo(b, b.TempDir(), full)
	b.Logf("generated %d files, %.1f MB of history in %s", full.textFiles+full.binFiles, float64(historySize(b, fullFixture.dir))/1e6, time.Since(start).Round(time.Millisecond))
	for _, tr := range []struct{ name, url string }{{"file", "file://" + fullFixture.dir}, {"http", fullFixture.httpURL}} {
		b.Run(tr.name, func(b *testing.B) {
			var ours, cli time.Duration
			for b.Loop() {
				o, c := compare(b, tr.url, fullFixture.commit)
				ours += o
				cli += c
			}
			n := time.Duration(b.N)
			report(b, tr.name, ours/n, cli/n)
			b.ReportMetric(float64((ours / n).Milliseconds()), "ours-ms")
			b.ReportMetric(float64((cli / n).Milliseconds()), "gitcli-ms")
			b.ReportMetric(float64(ours)/float64(cli), "ratio")
		})
	}
}
