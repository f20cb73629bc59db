package build

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

type checkoutBundle struct {
	root   string
	repo   *testRepo
	first  string // main's first commit
	second string // main's head
	topic  string // topic's head
}

// setupRepo creates "app.git" with two commits on main and one on topic.
func setupRepo(t *testing.T) *checkoutBundle {
	t.Helper()
	root := t.TempDir()
	r := newTestRepo(t, root, "app.git")
	r.write("README.md", []byte("v1\n"), 0o644)
	r.write("bin/run.sh", []byte("#!/bin/sh\necho hi\n"), 0o755)
	r.symlink("docs/readme-link", "../README.md")
	first := r.commit("first")
	r.write("README.md", []byte("v2\n"), 0o644)
	second := r.commit("second")
	r.branch("topic")
	r.write("TOPIC", []byte("topic\n"), 0o644)
	topic := r.commit("topic")
	r.branch("main")
	return &checkoutBundle{root: root, repo: r, first: first, second: second, topic: topic}
}

func readCheckout(t *testing.T, co *Checkout, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(co.Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCheckoutRepository_File(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)

	t.Run("branch head", func(t *testing.T) {
		t.Parallel()
		co := mustCheckout(t, CheckoutRequest{URL: b.repo.url(), Branch: "main"})
		if co.Commit != b.second {
			t.Fatalf("commit = %s, want %s", co.Commit, b.second)
		}
		if got := readCheckout(t, co, "README.md"); got != "v2\n" {
			t.Fatalf("README.md = %q", got)
		}
		fi, err := os.Stat(filepath.Join(co.Dir, "bin/run.sh"))
		if err != nil || fi.Mode().Perm()&0o100 == 0 {
			t.Fatalf("bin/run.sh not executable: %v %v", fi, err)
		}
		if target, err := os.Readlink(filepath.Join(co.Dir, "docs/readme-link")); err != nil || target != "../README.md" {
			t.Fatalf("symlink = %q, %v", target, err)
		}
		if _, err := os.Stat(filepath.Join(co.Dir, ".git")); !os.IsNotExist(err) {
			t.Fatalf("checkout has a .git: %v", err)
		}
		if _, err := os.Stat(filepath.Join(co.Dir, "TOPIC")); !os.IsNotExist(err) {
			t.Fatalf("main checkout has topic's file: %v", err)
		}
	})
	t.Run("other branch", func(t *testing.T) {
		t.Parallel()
		co := mustCheckout(t, CheckoutRequest{URL: b.repo.url(), Branch: "topic"})
		if co.Commit != b.topic || readCheckout(t, co, "TOPIC") != "topic\n" {
			t.Fatalf("topic checkout = %s", co.Commit)
		}
	})
	t.Run("pinned commit wins over branch", func(t *testing.T) {
		t.Parallel()
		co := mustCheckout(t, CheckoutRequest{URL: b.repo.url(), Branch: "main", Commit: strings.ToUpper(b.first)})
		if co.Commit != b.first || readCheckout(t, co, "README.md") != "v1\n" {
			t.Fatalf("pinned checkout = %s", co.Commit)
		}
	})
	t.Run("isolated directories", func(t *testing.T) {
		t.Parallel()
		a := mustCheckout(t, CheckoutRequest{URL: b.repo.url(), Branch: "main"})
		c := mustCheckout(t, CheckoutRequest{URL: b.repo.url(), Branch: "main"})
		if a.Dir == c.Dir {
			t.Fatal("two checkouts share a directory")
		}
		if err := a.Remove(); err != nil {
			t.Fatal(err)
		}
		if readCheckout(t, c, "README.md") != "v2\n" {
			t.Fatal("removing one checkout touched the other")
		}
	})

	errs := []struct {
		name string
		req  CheckoutRequest
		code string
	}{
		{name: "missing branch", req: CheckoutRequest{URL: b.repo.url(), Branch: "nope"}, code: CodeBranchNotFound},
		{name: "invalid branch", req: CheckoutRequest{URL: b.repo.url(), Branch: "a..b"}, code: CodeBranchNotFound},
		{name: "no revision", req: CheckoutRequest{URL: b.repo.url()}, code: CodeBranchNotFound},
		{name: "missing commit", req: CheckoutRequest{URL: b.repo.url(), Commit: strings.Repeat("ab", 20)}, code: CodeCommitNotFound},
		{name: "short commit", req: CheckoutRequest{URL: b.repo.url(), Commit: b.first[:12]}, code: CodeCommitNotFound},
		{name: "missing repository", req: CheckoutRequest{URL: "file://" + b.root + "/nope.git", Branch: "main"}, code: CodeRepositoryUnreachable},
		{name: "bare path", req: CheckoutRequest{URL: b.repo.dir, Branch: "main"}, code: CodeRepositoryURLInvalid},
		{name: "ext helper", req: CheckoutRequest{URL: "ext::sh", Branch: "main"}, code: CodeTransportUnsupported},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tt.req.Dir = dir
			tt.req.Auth = local
			_, err := CheckoutRepository(t.Context(), tt.req)
			wantCode(t, err, tt.code)
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Fatalf("failed checkout left %d entries behind", len(left))
			}
		})
	}
}

// TestCheckoutRepository_MakesTempDir checks out into the system temp
// directory when it is missing, as in the Slipway image (FROM scratch,
// no /tmp), where the stack's worker runs.
func TestCheckoutRepository_MakesTempDir(t *testing.T) {
	b := setupRepo(t)
	tmp := filepath.Join(t.TempDir(), "tmp")
	t.Setenv("TMPDIR", tmp)
	co, err := CheckoutRepository(t.Context(), CheckoutRequest{URL: b.repo.url(), Branch: "main", Auth: local})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Remove()
	if !strings.HasPrefix(co.Dir, tmp+string(filepath.Separator)) || readCheckout(t, co, "README.md") != "v2\n" {
		t.Fatalf("checkout in %s, want it in %s", co.Dir, tmp)
	}
	if fi, err := os.Stat(tmp); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the temp directory made: %v %v, want mode 0700", fi, err)
	}
}

func TestCheckoutRepository_Warnings(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t, t.TempDir(), "lfs.git")
	r.write(".gitattributes", []byte("*.bin filter=lfs diff=lfs merge=lfs -text\n"), 0o644)
	r.write("a.bin", []byte("version https://git-lfs.github.com/spec/v1\n"), 0o644)
	r.commit("lfs")
	co := mustCheckout(t, CheckoutRequest{URL: r.url(), Branch: "main"})
	if len(co.Warnings) != 1 || co.Warnings[0].Code != WarnLFSUnsupported {
		t.Fatalf("warnings = %+v, want one %s", co.Warnings, WarnLFSUnsupported)
	}
}

func TestCheckoutRepository_RawTrees(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t, t.TempDir(), "raw.git")
	r.commitRawTree("submodule", []rawEntry{
		{name: "README.md", mode: filemode.Regular, content: "hi\n"},
		{name: "vendor-lib", mode: filemode.Submodule, hash: plumbing.NewHash(strings.Repeat("12", 20))},
	})
	co := mustCheckout(t, CheckoutRequest{URL: r.url(), Branch: "submodule"})
	if len(co.Warnings) != 1 || co.Warnings[0].Code != WarnSubmodulesUnsupported || !strings.Contains(co.Warnings[0].Message, "vendor-lib") {
		t.Fatalf("warnings = %+v, want %s naming vendor-lib", co.Warnings, WarnSubmodulesUnsupported)
	}
	if entries, err := os.ReadDir(filepath.Join(co.Dir, "vendor-lib")); err != nil || len(entries) != 0 {
		t.Fatalf("submodule directory = %v, %v; want empty", entries, err)
	}

	for _, name := range []string{"..", ".git", ".GIT", "."} {
		r.commitRawTree("evil", []rawEntry{{name: name, mode: filemode.Regular, content: "x"}})
		dir := t.TempDir()
		_, err := CheckoutRepository(t.Context(), CheckoutRequest{URL: r.url(), Branch: "evil", Dir: dir, Auth: local})
		wantCode(t, err, CodeCheckoutFailed)
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatalf("%q: failed checkout left files behind", name)
		}
	}
}

// fetchRecorder records whether remote fetches were shallow.
var fetchRecorder struct {
	mu      sync.Mutex
	shallow map[string]bool // commit checked out -> fetched shallow
}

func recordFetch(repo *git.Repository) {
	shallow, _ := repo.Storer.Shallow()
	refs, _ := repo.References()
	fetchRecorder.mu.Lock()
	defer fetchRecorder.mu.Unlock()
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			fetchRecorder.shallow[ref.Hash().String()] = len(shallow) > 0
		}
		return nil
	})
}

func init() {
	fetchRecorder.shallow = map[string]bool{}
	testHookFetched = recordFetch
}

func wasShallow(t *testing.T, commit string) bool {
	t.Helper()
	fetchRecorder.mu.Lock()
	defer fetchRecorder.mu.Unlock()
	s, ok := fetchRecorder.shallow[commit]
	if !ok {
		t.Fatalf("no fetch recorded for %s", commit)
	}
	return s
}

func TestCheckoutRepository_HTTP(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)
	// A second repository whose server allows wanting any reachable commit,
	// as GitHub does; git http-backend refuses it by default.
	c := newTestRepo(t, b.root, "reachable.git")
	c.write("README.md", []byte("c1\n"), 0o644)
	cFirst := c.commit("c1")
	c.write("README.md", []byte("c2\n"), 0o644)
	cHead := c.commit("c2")
	c.setConfig("uploadpack", "allowReachableSHA1InWant", "true")
	base := serveGit(t, b.root, "", "")

	t.Run("branch head is shallow", func(t *testing.T) {
		t.Parallel()
		co := mustCheckout(t, CheckoutRequest{URL: base + "/reachable.git", Branch: "main"})
		if co.Commit != cHead || readCheckout(t, co, "README.md") != "c2\n" {
			t.Fatalf("checkout = %s", co.Commit)
		}
		if !wasShallow(t, cHead) {
			t.Fatal("branch head was not fetched shallow")
		}
	})
	t.Run("pinned commit shallow when allowed", func(t *testing.T) {
		t.Parallel()
		co := mustCheckout(t, CheckoutRequest{URL: base + "/reachable.git", Commit: cFirst})
		if co.Commit != cFirst || readCheckout(t, co, "README.md") != "c1\n" {
			t.Fatalf("checkout = %s", co.Commit)
		}
		if !wasShallow(t, cFirst) {
			t.Fatal("pinned commit was not fetched shallow")
		}
	})
	t.Run("pinned commit falls back to a full fetch", func(t *testing.T) {
		t.Parallel()
		co := mustCheckout(t, CheckoutRequest{URL: base + "/app.git", Commit: b.first})
		if co.Commit != b.first || readCheckout(t, co, "README.md") != "v1\n" {
			t.Fatalf("checkout = %s", co.Commit)
		}
	})
	t.Run("topic branch", func(t *testing.T) {
		t.Parallel()
		co := mustCheckout(t, CheckoutRequest{URL: base + "/app.git", Branch: "topic"})
		if co.Commit != b.topic {
			t.Fatalf("checkout = %s", co.Commit)
		}
	})
	for _, tt := range []struct {
		name, url, branch, commit, code string
	}{
		{name: "missing branch", url: base + "/app.git", branch: "nope", code: CodeBranchNotFound},
		{name: "missing commit full fetch", url: base + "/app.git", commit: strings.Repeat("cd", 20), code: CodeCommitNotFound},
		{name: "missing commit shallow", url: base + "/reachable.git", commit: strings.Repeat("cd", 20), code: CodeCommitNotFound},
		{name: "missing repository", url: base + "/nope.git", branch: "main", code: CodeRepositoryUnreachable},
		{name: "nothing listening", url: "http://127.0.0.1:1/app.git", branch: "main", code: CodeRepositoryUnreachable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := CheckoutRepository(t.Context(), CheckoutRequest{URL: tt.url, Branch: tt.branch, Commit: tt.commit, Dir: t.TempDir(), Auth: Auth{Outbound: loopback}})
			wantCode(t, err, tt.code)
		})
	}
}

func TestCheckoutRepository_HTTPAuth(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)
	const token = "ghs_TOKEN_never_logged"
	base := serveGit(t, b.root, "x-access-token", token)

	co := mustCheckout(t, CheckoutRequest{URL: base + "/app.git", Branch: "main", Auth: Auth{Username: "x-access-token", Password: token, Outbound: loopback}})
	if co.Commit != b.second {
		t.Fatalf("checkout = %s", co.Commit)
	}
	for _, auth := range []Auth{{Outbound: loopback}, {Username: "x-access-token", Password: token + "-wrong", Outbound: loopback}} {
		_, err := CheckoutRepository(t.Context(), CheckoutRequest{URL: base + "/app.git", Branch: "main", Auth: auth, Dir: t.TempDir()})
		wantCode(t, err, CodeRepositoryUnreachable)
		if strings.Contains(err.Error(), token) {
			t.Fatalf("error leaks the token: %v", err)
		}
	}
	heads, err := ListHeads(t.Context(), base+"/app.git", Auth{Username: "x-access-token", Password: token, Outbound: loopback})
	if err != nil || heads["main"] != b.second {
		t.Fatalf("ListHeads = %v, %v", heads, err)
	}
}

// go-git builds remotes from the configuration we hand it and never reads the
// user's or the system's gitconfig, so a url.<base>.insteadOf rewrite to a
// remote helper cannot take effect. This test pins that behaviour: if go-git
// started honouring ~/.gitconfig, the checkout below would be redirected.
func TestCheckoutRepository_IgnoresInsteadOf(t *testing.T) {
	b := setupRepo(t)
	base := serveGit(t, b.root, "", "")
	home := t.TempDir()
	marker := filepath.Join(home, "pwned")
	gitconfig := "[url \"ext::sh -c touch% " + marker + "%\"]\n\tinsteadOf = " + base + "\n" +
		"[url \"file:///nonexistent/\"]\n\tinsteadOf = " + base + "/\n" +
		"[protocol \"ext\"]\n\tallow = always\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))

	co := mustCheckout(t, CheckoutRequest{URL: base + "/app.git", Branch: "main"})
	if co.Commit != b.second {
		t.Fatalf("checkout = %s", co.Commit)
	}
	if _, err := ListHeads(t.Context(), base+"/app.git", Auth{Outbound: loopback}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the ext:: rewrite ran: %v", err)
	}
}

func TestListHeads(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)
	base := serveGit(t, b.root, "", "")
	want := map[string]string{"main": b.second, "topic": b.topic}
	for _, url := range []string{b.repo.url(), base + "/app.git"} {
		heads, err := ListHeads(t.Context(), url, local)
		if err != nil {
			t.Fatal(err)
		}
		if len(heads) != len(want) || heads["main"] != want["main"] || heads["topic"] != want["topic"] {
			t.Fatalf("%s: heads = %v, want %v", url, heads, want)
		}
	}
	_, err := ListHeads(t.Context(), "ext::sh", Auth{})
	wantCode(t, err, CodeTransportUnsupported)
	_, err = ListHeads(t.Context(), base+"/nope.git", Auth{Outbound: loopback})
	wantCode(t, err, CodeRepositoryUnreachable)
	_, err = ListHeads(t.Context(), "http://127.0.0.1:1/app.git?access_token=SECRET123", Auth{Password: "SECRET456", Outbound: loopback})
	wantCode(t, err, CodeRepositoryUnreachable)
	if strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("error leaks a secret: %v", err)
	}
}

func TestCheckoutRepository_ReadsAtCommit(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)
	b.repo.write("README.md", []byte("v3\n"), 0o644)
	third := b.repo.commit("third")
	old := mustCheckout(t, CheckoutRequest{URL: b.repo.url(), Commit: b.second})
	got, err := old.ReadFile("README.md")
	if err != nil || !bytes.Equal(got, []byte("v2\n")) {
		t.Fatalf("ReadFile at %s = %q, %v", b.second, got, err)
	}
	head := mustCheckout(t, CheckoutRequest{URL: b.repo.url(), Branch: "main"})
	if head.Commit != third {
		t.Fatalf("head = %s, want %s", head.Commit, third)
	}
}
