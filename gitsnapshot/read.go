package gitsnapshot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

const bundleSignature = "# v2 git bundle\n"

// Bundle is a snapshot bundle read back: its one branch ref and the
// snapshot's objects in memory.
type Bundle struct {
	// Branch is the short name of the bundle's ref.
	Branch string
	// Commit is the snapshot commit the ref points at.
	Commit string
	// Base is the snapshot's parent, the bundle's prerequisite.
	Base string
	// Repository holds the bundle's objects (memory only).
	Repository *git.Repository
}

// ErrInvalid wraps every reason a bundle is refused.
var ErrInvalid = errors.New("invalid snapshot bundle")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Read parses a bundle Create wrote: a v2 git bundle with one
// prerequisite (the base) and one branch ref (the snapshot commit), whose
// pack holds the commit and its whole tree. Anything else is ErrInvalid.
func Read(data []byte) (Bundle, error) {
	br := bufio.NewReader(bytes.NewReader(data))
	sig, err := br.ReadString('\n')
	if err != nil || sig != bundleSignature {
		return Bundle{}, invalid("not a v2 git bundle")
	}
	var b Bundle
	var ref plumbing.ReferenceName
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return Bundle{}, invalid("truncated header")
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			break
		}
		if base, ok := strings.CutPrefix(line, "-"); ok {
			id, _, _ := strings.Cut(base, " ")
			if b.Base != "" || !isHash(id) {
				return Bundle{}, invalid("want exactly one prerequisite commit")
			}
			b.Base = id
			continue
		}
		id, name, ok := strings.Cut(line, " ")
		if !ok || b.Commit != "" || !isHash(id) {
			return Bundle{}, invalid("want exactly one ref")
		}
		b.Commit, ref = id, plumbing.ReferenceName(name)
	}
	if b.Base == "" || b.Commit == "" || !ref.IsBranch() || ref.Validate() != nil {
		return Bundle{}, invalid("want one prerequisite and one branch ref")
	}
	b.Branch = ref.Short()
	st := memory.NewStorage()
	if err := packfile.UpdateObjectStorage(st, br); err != nil {
		return Bundle{}, invalid("pack: %v", err)
	}
	if b.Repository, err = git.Init(st, nil); err != nil {
		return Bundle{}, err
	}
	commit, err := b.Repository.CommitObject(plumbing.NewHash(b.Commit))
	if err != nil {
		return Bundle{}, invalid("the pack lacks commit %s", b.Commit)
	}
	if len(commit.ParentHashes) != 1 || commit.ParentHashes[0].String() != b.Base {
		return Bundle{}, invalid("commit %s is not a snapshot on %s", b.Commit, b.Base)
	}
	if err := completeTree(commit); err != nil {
		return Bundle{}, err
	}
	return b, nil
}

// completeTree checks every tree and blob of the commit is in the pack.
func completeTree(c *object.Commit) error {
	tree, err := c.Tree()
	if err != nil {
		return invalid("the pack lacks the tree of %s", c.Hash)
	}
	files := tree.Files()
	defer files.Close()
	for {
		_, err := files.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return invalid("incomplete tree: %v", err)
		}
	}
}

func isHash(s string) bool {
	return len(s) == 40 && strings.Trim(s, "0123456789abcdef") == ""
}
