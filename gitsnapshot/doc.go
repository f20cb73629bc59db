// Package gitsnapshot commits a git worktree as it is (tracked, untracked
// and not ignored files) to a snapshot commit on top of HEAD without
// touching the repository, and carries it as a git bundle (v2) the daemon
// reads back for `slipway preview deploy --local`.
//
// The snapshot's objects are written to memory only: the repository's
// object database, index and refs are never written. The bundle holds the
// snapshot commit with its whole tree, so it checks out without any other
// object; its one prerequisite is the base commit (HEAD), which a stock
// `git bundle verify` in a clone that has it accepts.
package gitsnapshot
