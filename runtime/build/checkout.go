package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/slipwayhq/slipway/outbound"
)

// Auth holds the credentials of one call. They come from the installation
// (for GitHub, an installation token) and are never stored by this package.
type Auth struct {
	// Username and Password are HTTP(S) basic auth; for a token, Username is
	// any non-empty name (GitHub uses "x-access-token") and Password the token.
	Username string
	Password string
	// SSHPrivateKey is a PEM private key for ssh:// and scp-like URLs; the
	// host key is checked against the known_hosts files. Without it go-git
	// uses the host's SSH agent.
	SSHPrivateKey    []byte
	SSHKeyPassphrase string
	// AllowFileURLs permits file:// repositories, read from the worker's
	// own file system. It is the operator's [git] allow_file_urls switch
	// and off unless set: with it, any tenant could build from any
	// repository the worker can read.
	AllowFileURLs bool
	// Outbound decides which addresses the remote may be reached at,
	// checked where each connection is made (gitdial.go); nil is the
	// strict policy, which refuses loopback, private and link-local
	// networks. Tenants name the remotes, so this is never left open.
	Outbound *outbound.Policy
}

// remote validates url and applies the installation's policy on local
// repositories; every entry point that reads a repository goes through it.
func (a Auth) remote(url string) (*remote, error) {
	r, err := parseRemote(url)
	if err != nil {
		return nil, err
	}
	if r.protocol == "file" && !a.AllowFileURLs {
		return nil, newError(CodeFileURLDisabled, "url", "file:// repositories are disabled on this installation; use an https:// or ssh:// URL (the operator can allow local repositories with [git] allow_file_urls)")
	}
	return r, nil
}

func (a Auth) method(r *remote) (transport.AuthMethod, error) {
	switch r.protocol {
	case "http", "https":
		if a.Username == "" && a.Password == "" {
			return nil, nil
		}
		return &githttp.BasicAuth{Username: a.Username, Password: a.Password}, nil
	case "ssh":
		if len(a.SSHPrivateKey) == 0 {
			return nil, nil
		}
		user := "git"
		if ep, err := transport.NewEndpoint(r.raw); err == nil && ep.User != "" {
			user = ep.User
		}
		keys, err := gitssh.NewPublicKeys(user, a.SSHPrivateKey, a.SSHKeyPassphrase)
		if err != nil {
			// The key parser's message never includes the key itself.
			return nil, &Error{Code: CodeRepositoryUnreachable, Field: "auth", Message: "SSH private key does not parse", Err: err}
		}
		return keys, nil
	}
	return nil, nil
}

// fingerprint identifies the credentials without revealing them, so listings
// made with different credentials are never shared.
func (a Auth) fingerprint() string {
	h := sha256.New()
	for _, s := range []string{a.Username, a.Password, string(a.SSHPrivateKey), a.SSHKeyPassphrase} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	// A listing read under one file:// or outbound policy is never served
	// under another.
	fmt.Fprintf(h, "file:%t outbound:%p", a.AllowFileURLs, outbound.OrStrict(a.Outbound))
	return hex.EncodeToString(h.Sum(nil))
}

func (a Auth) secrets() []string { return []string{a.Password, a.SSHKeyPassphrase} }

// CheckoutRequest names one commit to check out.
type CheckoutRequest struct {
	URL string
	// Branch is resolved to its head once, unless Commit is set.
	Branch string
	// Commit, a full 40-hex hash, is used directly.
	Commit string
	Auth   Auth
	// Dir is the parent directory of the checkout's temporary directory; the
	// system temp directory when empty (made if missing: checkoutParent).
	Dir string
	// Snapshot is a local snapshot bundle (gitsnapshot) holding Commit: the
	// commit is checked out from it and nothing is fetched.
	Snapshot []byte
}

// Warning is something about a checkout the deployment log should show.
type Warning struct {
	Code    string
	Message string
}

// Warning codes.
const (
	WarnSubmodulesUnsupported = "submodules_not_supported"
	WarnLFSUnsupported        = "lfs_not_supported"
)

// Checkout is the files of one commit in a directory of its own.
type Checkout struct {
	// Dir is the repository root. It holds the commit's files only, no .git.
	Dir string
	// Commit is the full hash that was checked out.
	Commit string
	// URL is the repository address it came from.
	URL string
	// Branch is the requested branch, if any.
	Branch   string
	Warnings []Warning
	base     string
}

// Remove deletes the checkout's files.
func (c *Checkout) Remove() error {
	if c == nil || c.base == "" {
		return nil
	}
	return os.RemoveAll(c.base)
}

// Checkout fetches one commit (the pinned one or the branch head) and writes
// its files into a new temporary directory. Remote transports fetch shallow
// (depth 1) whenever the server allows it; file:// repositories are read in
// place without any transport. Submodules and Git LFS are not set up: their
// presence is reported in Checkout.Warnings.
func CheckoutRepository(ctx context.Context, req CheckoutRequest) (*Checkout, error) {
	r, err := req.Auth.remote(req.URL)
	if err != nil {
		return nil, err
	}
	want, err := checkRevision(req.Branch, req.Commit)
	if err != nil {
		return nil, err
	}
	dir, err := checkoutParent(req.Dir)
	if err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp(dir, "slipway-checkout-")
	if err != nil {
		return nil, fmt.Errorf("create checkout directory: %w", err)
	}
	co := &Checkout{Dir: filepath.Join(base, "tree"), URL: req.URL, Branch: req.Branch, base: base}
	if err := co.fill(ctx, r, want, req.Auth, req.Snapshot); err != nil {
		_ = os.RemoveAll(base)
		return nil, err
	}
	return co, nil
}

// checkoutParent is the directory checkouts go in: dir, else the system
// temp directory, made if it is missing. The Slipway image is FROM
// scratch: in the stack's worker container there is no /tmp until the
// first checkout makes it (readable by the worker alone).
func checkoutParent(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	dir = os.TempDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create the temporary directory %s: %w", dir, err)
	}
	return dir, nil
}

type revision struct {
	branch plumbing.ReferenceName
	commit plumbing.Hash
	pinned bool
}

func checkRevision(branch, commit string) (revision, error) {
	var rev revision
	if commit != "" {
		c := strings.ToLower(commit)
		if len(c) != 40 || strings.Trim(c, "0123456789abcdef") != "" {
			return rev, newError(CodeCommitNotFound, "commit", "commit %q must be a full 40-character hexadecimal hash", commit)
		}
		rev.commit = plumbing.NewHash(c)
		rev.pinned = true
	}
	if branch == "" {
		if !rev.pinned {
			return rev, newError(CodeBranchNotFound, "branch", "a branch or a commit is required")
		}
		return rev, nil
	}
	if ref, ok := pullRequestRef(branch); ok {
		rev.branch = ref
		return rev, nil
	}
	rev.branch = plumbing.NewBranchReferenceName(branch)
	if err := rev.branch.Validate(); err != nil || strings.HasPrefix(branch, "-") {
		return rev, newError(CodeBranchNotFound, "branch", "%q is not a valid branch name", branch)
	}
	return rev, nil
}

// pullRequestRef maps a pull request's head as previews name it
// ("pull/7/head", GitHub's ref for a fork's commits) to its full reference
// name, refs/pull/7/head; any other branch is no pull ref.
func pullRequestRef(branch string) (plumbing.ReferenceName, bool) {
	rest, ok := strings.CutPrefix(branch, "pull/")
	if !ok {
		return "", false
	}
	number, ok := strings.CutSuffix(rest, "/head")
	if !ok || number == "" || strings.Trim(number, "0123456789") != "" {
		return "", false
	}
	return plumbing.ReferenceName("refs/pull/" + number + "/head"), true
}

func (co *Checkout) fill(ctx context.Context, r *remote, want revision, auth Auth, snapshot []byte) error {
	var repo *git.Repository
	var err error
	if len(snapshot) > 0 {
		repo, err = snapshotRepository(snapshot, want)
	} else if r.protocol == "file" {
		repo, err = openLocal(r)
	} else {
		gitDir := filepath.Join(co.base, "objects.git")
		// The fetched objects are only needed until the files are written.
		defer os.RemoveAll(gitDir)
		repo, err = fetchRemote(ctx, r, want, auth, gitDir)
	}
	if err != nil {
		return err
	}
	hash := want.commit
	if !want.pinned {
		ref, err := repo.Reference(want.branch, true)
		if err != nil {
			return newError(CodeBranchNotFound, "branch", "branch %q does not exist in %s", want.branch.Short(), RedactURL(r.raw))
		}
		hash = ref.Hash()
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return newError(CodeCommitNotFound, "commit", "commit %s does not exist in %s", hash, RedactURL(r.raw))
	}
	co.Commit = commit.Hash.String()
	if err := os.Mkdir(co.Dir, 0o755); err != nil {
		return fmt.Errorf("create checkout directory: %w", err)
	}
	w, err := writeTree(ctx, repo, commit, co.Dir)
	if err != nil {
		return err
	}
	co.Warnings = w
	return nil
}

func openLocal(r *remote) (*git.Repository, error) {
	repo, err := git.PlainOpenWithOptions(r.dir, &git.PlainOpenOptions{})
	if err != nil {
		return nil, &Error{Code: CodeRepositoryUnreachable, Field: "url", Message: fmt.Sprintf("no git repository at %s", r.raw), Err: err}
	}
	return repo, nil
}

// fetchRemote fetches the wanted revision into a bare repository at gitDir.
// A branch head is fetched at depth 1. A pinned commit is fetched at depth 1
// when the server allows wanting any reachable commit; otherwise every
// branch and tag is fetched in full and the commit looked up among them.
func fetchRemote(ctx context.Context, r *remote, want revision, auth Auth, gitDir string) (*git.Repository, error) {
	am, err := auth.method(r)
	if err != nil {
		return nil, err
	}
	st := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	repo, err := git.Init(st, nil)
	if err != nil {
		return nil, fmt.Errorf("init checkout storage: %w", err)
	}
	conn, err := auth.connect(ctx, r)
	if err != nil {
		return nil, err
	}
	defer conn.done()
	ctx = conn.ctx
	// The remote is built from our own config only: no user or system
	// gitconfig is read, so url.<x>.insteadOf rewrites cannot redirect it.
	rem := git.NewRemote(st, &config.RemoteConfig{Name: "origin", URLs: []string{conn.url}})
	opts := &git.FetchOptions{RemoteName: "origin", Auth: am, Depth: 1, Tags: git.NoTags, ProxyOptions: conn.proxy}
	if want.pinned {
		opts.RefSpecs = []config.RefSpec{config.RefSpec(want.commit.String() + ":refs/heads/slipway-pinned")}
	} else {
		opts.RefSpecs = []config.RefSpec{config.RefSpec("+" + want.branch.String() + ":" + want.branch.String())}
	}
	err = rem.FetchContext(ctx, opts)
	if want.pinned && errors.Is(err, git.ErrExactSHA1NotSupported) {
		opts.Depth = 0
		opts.RefSpecs = []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}
		if want.branch.String() != "" && !want.branch.IsBranch() {
			// A pull request's head (a fork's commit) is under refs/pull/,
			// which no branch refspec reaches.
			opts.RefSpecs = append(opts.RefSpecs, config.RefSpec("+"+want.branch.String()+":"+want.branch.String()))
		}
		err = rem.FetchContext(ctx, opts)
	}
	if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) {
		if testHookFetched != nil {
			testHookFetched(repo)
		}
		return repo, nil
	}
	var noMatch git.NoMatchingRefSpecError
	switch {
	case errors.As(err, &noMatch), errors.Is(err, transport.ErrEmptyRemoteRepository):
		if want.pinned {
			return nil, newError(CodeCommitNotFound, "commit", "commit %s does not exist in %s", want.commit, RedactURL(r.raw))
		}
		return nil, newError(CodeBranchNotFound, "branch", "branch %q does not exist in %s", want.branch.Short(), RedactURL(r.raw))
	case want.pinned && strings.Contains(err.Error(), "not our ref"):
		return nil, newError(CodeCommitNotFound, "commit", "commit %s does not exist in %s", want.commit, RedactURL(r.raw))
	}
	return nil, unreachable(err, r, auth)
}

// testHookFetched lets tests inspect what a remote fetch stored (shallow or
// full) before the objects are deleted.
var testHookFetched func(*git.Repository)

// unreachable is the error of a failed fetch or listing: a refused
// destination as destination_not_allowed, anything else as
// repository_unreachable with the kind of failure but nothing the remote
// sent (remoteCause).
func unreachable(err error, r *remote, auth Auth) error {
	var refusal *outbound.Error
	if errors.As(unwrapGoGit(err), &refusal) {
		return refusedOrUnreachable(refusal, r)
	}
	msg := fmt.Sprintf("cannot fetch from %s", RedactURL(r.raw))
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		msg = fmt.Sprintf("%s: the installation's credentials were refused", msg)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		msg = fmt.Sprintf("%s: repository not found", msg)
	}
	return &Error{Code: CodeRepositoryUnreachable, Field: "url", Message: msg, Err: scrub(remoteCause(err), r.raw, auth.secrets()...)}
}

// writeTree writes the commit's files under dir through an os.Root, so no
// entry (however crafted) and no symlink written earlier can place a file
// outside dir.
func writeTree(ctx context.Context, repo *git.Repository, commit *object.Commit, dir string) ([]Warning, error) {
	tree, err := commit.Tree()
	if err != nil {
		return nil, newError(CodeCommitNotFound, "commit", "commit %s has no tree: %v", commit.Hash, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open checkout directory: %w", err)
	}
	defer root.Close()
	var warnings []Warning
	var submodules []string
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("write checkout: %w", err)
		}
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &Error{Code: CodeCheckoutFailed, Field: "commit", Message: "cannot read the commit's tree", Err: err}
		}
		if !safeTreePath(name) {
			return nil, newError(CodeCheckoutFailed, "commit", "commit %s contains the unsafe path %q", commit.Hash, name)
		}
		switch entry.Mode {
		case filemode.Dir:
			err = root.Mkdir(name, 0o755)
		case filemode.Submodule:
			submodules = append(submodules, name)
			err = root.Mkdir(name, 0o755)
		case filemode.Symlink:
			err = writeSymlink(repo, root, name, entry.Hash)
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			perm := os.FileMode(0o644)
			if entry.Mode == filemode.Executable {
				perm = 0o755
			}
			err = writeBlob(repo, root, name, entry.Hash, perm)
		default:
			err = fmt.Errorf("unsupported file mode %s", entry.Mode)
		}
		if err != nil {
			return nil, &Error{Code: CodeCheckoutFailed, Field: "commit", Message: fmt.Sprintf("cannot write %q", name), Err: err}
		}
		if entry.Mode != filemode.Dir && filepath.Base(name) == ".gitattributes" && lfsAttributes(root, name) {
			warnings = append(warnings, Warning{Code: WarnLFSUnsupported, Message: fmt.Sprintf("%s sets filter=lfs; Git LFS is not supported and such files hold LFS pointers, not their contents", name)})
		}
	}
	if len(submodules) > 0 {
		warnings = append(warnings, Warning{Code: WarnSubmodulesUnsupported, Message: fmt.Sprintf("submodules are not supported and were left empty: %s", strings.Join(submodules, ", "))})
	}
	return warnings, nil
}

// safeTreePath rejects entries git itself would refuse to check out.
func safeTreePath(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return false
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") {
			return false
		}
	}
	return true
}

func writeBlob(repo *git.Repository, root *os.Root, name string, h plumbing.Hash, perm os.FileMode) error {
	blob, err := repo.BlobObject(h)
	if err != nil {
		return err
	}
	src, err := blob.Reader()
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

func writeSymlink(repo *git.Repository, root *os.Root, name string, h plumbing.Hash) error {
	blob, err := repo.BlobObject(h)
	if err != nil {
		return err
	}
	src, err := blob.Reader()
	if err != nil {
		return err
	}
	defer src.Close()
	target, err := io.ReadAll(io.LimitReader(src, 4096))
	if err != nil {
		return err
	}
	return root.Symlink(string(target), name)
}

func lfsAttributes(root *os.Root, name string) bool {
	b, err := root.ReadFile(name)
	if err != nil {
		return false
	}
	return strings.Contains(string(b), "filter=lfs")
}
