package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// newPreviewApproveCommand is `slipway preview approve APP PR`: a member
// approves the preview of a pull request from a fork or from an author
// without write permission, which GitHub previews wait for.
func newPreviewApproveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "approve APP PR",
		Short: "Approve the preview of a pull request from a fork or an author without write access",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(strings.TrimPrefix(args[1], "#"))
			if err != nil || n <= 0 {
				return fmt.Errorf("PR: %q is not a pull request number (number_invalid)", args[1])
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			a, err := c.ApprovePullRequest(cmd.Context(), args[0], n)
			if err != nil {
				return err
			}
			fork := ""
			if a.FromFork {
				fork = " (from a fork: its preview mounts no stored secrets)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "approved %s#%d at %s%s; the preview deploys next\n", a.Repository, a.Number, shortCommit(a.HeadSHA), fork)
			return nil
		},
	}
}

func shortCommit(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
