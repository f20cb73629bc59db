package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/gitsnapshot"
)

// deployLocalPreview is `slipway preview deploy APP --local`: it commits
// the current worktree to a snapshot on top of HEAD (in memory: the
// branch, index, refs and object database stay as they are), uploads it
// as a git bundle and deploys it as the preview of the current branch.
func deployLocalPreview(cmd *cobra.Command, app string, ref previewRef, wait bool, timeout time.Duration) error {
	if ref.branch != "" {
		return fmt.Errorf("--branch: --local deploys the current branch of the worktree; leave --branch out (branch_invalid)")
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	snap, err := gitsnapshot.Create(dir, time.Now())
	if err != nil {
		return fmt.Errorf("snapshot the worktree: %w", err)
	}
	c, err := apiClient()
	if err != nil {
		return err
	}
	p, err := c.DeployLocalPreview(cmd.Context(), app, ref.slot, snap.Bundle)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	verb := "updated"
	if p.Created {
		verb = "created"
	}
	fmt.Fprintf(out, "preview %s of %s %s: snapshot %s on %s (%d bytes)\n",
		p.Slug, previewRef{branch: snap.Branch, slot: ref.slot}, verb, p.Commit, p.Base, len(snap.Bundle))
	if p.Deployment == nil {
		return nil
	}
	return queued(cmd, *p.Deployment, wait, timeout)
}
