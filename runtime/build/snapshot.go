package build

import (
	git "github.com/go-git/go-git/v5"

	"github.com/slipwayhq/slipway/gitsnapshot"
)

// CodeSnapshotInvalid: a local snapshot bundle does not read back or
// does not hold the commit asked for.
const CodeSnapshotInvalid = "snapshot_invalid"

// snapshotRepository reads a local snapshot bundle into memory; it must
// hold the pinned commit.
func snapshotRepository(bundle []byte, want revision) (*git.Repository, error) {
	b, err := gitsnapshot.Read(bundle)
	if err != nil {
		return nil, &Error{Code: CodeSnapshotInvalid, Field: "snapshot", Message: "the local snapshot does not read back", Err: err}
	}
	if !want.pinned || b.Commit != want.commit.String() {
		return nil, newError(CodeSnapshotInvalid, "commit", "the local snapshot holds %s, not the commit asked for", b.Commit)
	}
	return b.Repository, nil
}
