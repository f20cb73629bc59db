package gitsnapshot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Snapshot is one worktree committed on top of its HEAD.
type Snapshot struct {
	// Branch is the branch HEAD points at.
	Branch string
	// Base is the HEAD commit the snapshot's parent is.
	Base string
	// Commit is the snapshot commit.
	Commit string
	// Bundle is the git bundle carrying Commit (see Read).
	Bundle []byte
}

// Create snapshots the worktree that contains dir. HEAD must be a branch
// with at least one commit. now dates the snapshot commit.
func Create(dir string, now time.Time) (Snapshot, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return Snapshot{}, fmt.Errorf("%s is not inside a git worktree: %w", dir, err)
	}
	head, err := repo.Head()
	if err != nil {
		return Snapshot{}, fmt.Errorf("read HEAD (a local snapshot needs at least one commit): %w", err)
	}
	if !head.Name().IsBranch() {
		return Snapshot{}, errors.New("HEAD is detached: check out the branch whose preview to deploy")
	}
	wt, err := repo.Worktree()
	if err != nil {
		return Snapshot{}, err
	}
	root := wt.Filesystem.Root()
	idx, err := repo.Storer.Index()
	if err != nil {
		return Snapshot{}, fmt.Errorf("read the index: %w", err)
	}
	tracked := map[string]bool{}
	for _, e := range idx.Entries {
		tracked[e.Name] = true
		for d := path.Dir(e.Name); d != "."; d = path.Dir(d) {
			tracked[d] = true
		}
	}
	patterns, err := gitignore.ReadPatterns(osfs.New(root), nil)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read .gitignore files: %w", err)
	}
	patterns = append(patterns, excludePatterns(filepath.Join(root, ".git", "info", "exclude"))...)
	w := &treeWriter{st: memory.NewStorage(), root: root, ignore: gitignore.NewMatcher(patterns), tracked: tracked}
	tree, err := w.tree(nil)
	if err != nil {
		return Snapshot{}, err
	}
	base := head.Hash()
	sig := object.Signature{Name: "slipway", Email: "slipway@localhost", When: now}
	commit := &object.Commit{
		Author: sig, Committer: sig, TreeHash: tree, ParentHashes: []plumbing.Hash{base},
		Message: fmt.Sprintf("slipway local snapshot of %s on %s\n", head.Name().Short(), base),
	}
	hash, err := w.store(commit.Encode, plumbing.CommitObject)
	if err != nil {
		return Snapshot{}, err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s-%s\n%s %s\n\n", bundleSignature, base, hash, head.Name())
	if _, err := packfile.NewEncoder(&buf, w.st, false).Encode(w.hashes, 10); err != nil {
		return Snapshot{}, fmt.Errorf("write the snapshot pack: %w", err)
	}
	return Snapshot{Branch: head.Name().Short(), Base: base.String(), Commit: hash.String(), Bundle: buf.Bytes()}, nil
}

// excludePatterns reads .git/info/exclude; a missing file excludes nothing.
func excludePatterns(file string) []gitignore.Pattern {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []gitignore.Pattern
	for line := range strings.SplitSeq(string(data), "\n") {
		if s := strings.TrimRight(line, "\r"); s != "" && !strings.HasPrefix(s, "#") {
			out = append(out, gitignore.ParsePattern(s, nil))
		}
	}
	return out
}

// treeWriter writes the worktree's trees and blobs to memory.
type treeWriter struct {
	st      *memory.Storage
	root    string
	ignore  gitignore.Matcher
	tracked map[string]bool
	hashes  []plumbing.Hash
	seen    map[plumbing.Hash]bool
}

func (w *treeWriter) store(encode func(plumbing.EncodedObject) error, t plumbing.ObjectType) (plumbing.Hash, error) {
	obj := w.st.NewEncodedObject()
	obj.SetType(t)
	if err := encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := w.st.SetEncodedObject(obj)
	if err != nil {
		return h, err
	}
	if w.seen == nil {
		w.seen = map[plumbing.Hash]bool{}
	}
	if !w.seen[h] {
		w.seen[h] = true
		w.hashes = append(w.hashes, h)
	}
	return h, nil
}

func (w *treeWriter) blob(data []byte) (plumbing.Hash, error) {
	return w.store(func(o plumbing.EncodedObject) error {
		wr, err := o.Writer()
		if err != nil {
			return err
		}
		if _, err := wr.Write(data); err != nil {
			return err
		}
		return wr.Close()
	}, plumbing.BlobObject)
}

// tree writes the directory at parts (relative to the root) and returns
// its hash; ZeroHash for a directory with nothing to include, which git
// does not record.
func (w *treeWriter) tree(parts []string) (plumbing.Hash, error) {
	dir := filepath.Join(append([]string{w.root}, parts...)...)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", dir, err)
	}
	var tree object.Tree
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		p := append(append([]string{}, parts...), name)
		rel := strings.Join(p, "/")
		full := filepath.Join(dir, name)
		info, err := os.Lstat(full)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		isDir := info.IsDir()
		if !w.tracked[rel] && w.ignore.Match(p, isDir) {
			continue
		}
		entry := object.TreeEntry{Name: name}
		switch {
		case isDir:
			if _, err := os.Lstat(filepath.Join(full, ".git")); err == nil {
				continue // a nested repository or submodule: not supported
			}
			if entry.Hash, err = w.tree(p); err != nil {
				return plumbing.ZeroHash, err
			}
			if entry.Hash.IsZero() {
				continue
			}
			entry.Mode = filemode.Dir
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entry.Mode = filemode.Symlink
			if entry.Hash, err = w.blob([]byte(filepath.ToSlash(target))); err != nil {
				return plumbing.ZeroHash, err
			}
		case info.Mode().IsRegular():
			data, err := os.ReadFile(full)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entry.Mode = filemode.Regular
			if info.Mode()&0o111 != 0 {
				entry.Mode = filemode.Executable
			}
			if entry.Hash, err = w.blob(data); err != nil {
				return plumbing.ZeroHash, err
			}
		default:
			continue // sockets, devices, fifos: git records none of them
		}
		tree.Entries = append(tree.Entries, entry)
	}
	if len(tree.Entries) == 0 {
		return plumbing.ZeroHash, nil
	}
	// git orders entries by name, a directory's name compared as if it
	// ended in a slash.
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(tree.Entries, func(i, j int) bool { return key(tree.Entries[i]) < key(tree.Entries[j]) })
	return w.store(tree.Encode, plumbing.TreeObject)
}
