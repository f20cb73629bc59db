package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
)

// newPreviewCommand is `slipway preview`: disposable deployments of one
// branch (and optional slot) of a repository-backed application.
func newPreviewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "preview",
		Aliases: []string{"previews"},
		Short:   "Create, deploy, list and delete previews of branches",
	}
	cmd.AddCommand(newPreviewCreateCommand(), newPreviewDeployCommand(), newPreviewListCommand(),
		newPreviewDeleteCommand(), newPreviewPruneCommand(), newPreviewURLCommand(), newPreviewApproveCommand())
	return cmd
}

// previewRef is how a command names a preview: --branch and --slot.
type previewRef struct {
	branch, slot string
}

func addPreviewRefFlags(cmd *cobra.Command, r *previewRef) {
	cmd.Flags().StringVar(&r.branch, "branch", "", "the preview's branch (required)")
	cmd.Flags().StringVar(&r.slot, "slot", "", "the preview's slot, so several previews can share a branch")
}

// client checks the reference, then opens the API client.
func (r previewRef) client() (*client.Client, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	return apiClient()
}

func (r previewRef) check() error {
	if r.branch == "" {
		return fmt.Errorf("--branch: name the preview's branch (branch_required)")
	}
	return nil
}

func (r previewRef) String() string {
	if r.slot == "" {
		return r.branch
	}
	return r.branch + " (slot " + r.slot + ")"
}

// findPreview resolves --branch and --slot to the preview's slug.
func findPreview(ctx context.Context, c *client.Client, app string, r previewRef) (api.Preview, error) {
	list, err := c.Previews(ctx, app)
	if err != nil {
		return api.Preview{}, err
	}
	for _, p := range list {
		if p.Branch == r.branch && p.Slot == r.slot {
			return p, nil
		}
	}
	return api.Preview{}, fmt.Errorf("%s has no preview of %s (not_found); create one with `slipway preview create %s --branch %s`", app, r, app, r.branch)
}

func newPreviewCreateCommand() *cobra.Command {
	var ref previewRef
	var noDeploy, wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "create APP --branch BRANCH [--slot SLOT]",
		Short: "Create the preview of a branch and deploy it; an existing one is returned as it is",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := ref.client()
			if err != nil {
				return err
			}
			deploy := !noDeploy
			p, err := c.CreatePreview(cmd.Context(), args[0], api.PreviewCreateRequest{Branch: ref.branch, Slot: ref.slot, Deploy: &deploy})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if p.Created {
				fmt.Fprintf(out, "preview %s of %s created\n", p.Slug, ref)
			} else {
				fmt.Fprintf(out, "preview %s of %s exists; not redeployed (use `slipway preview deploy`)\n", p.Slug, ref)
			}
			if p.Deployment == nil {
				return nil
			}
			if !p.Created {
				fmt.Fprintf(out, "latest deployment %s: %s\n", p.Deployment.ID, p.Deployment.State)
				return nil
			}
			return queued(cmd, *p.Deployment, wait, timeout)
		},
	}
	addPreviewRefFlags(cmd, &ref)
	cmd.Flags().BoolVar(&noDeploy, "no-deploy", false, "create the preview without deploying it")
	addWaitFlags(cmd, &wait, &timeout)
	return cmd
}

func newPreviewDeployCommand() *cobra.Command {
	var ref previewRef
	var wait, local bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "deploy APP (--branch BRANCH | --local) [--slot SLOT]",
		Short: "Redeploy a preview at its branch head, or deploy the current worktree with --local",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if local {
				return deployLocalPreview(cmd, args[0], ref, wait, timeout)
			}
			c, err := ref.client()
			if err != nil {
				return err
			}
			p, err := findPreview(cmd.Context(), c, args[0], ref)
			if err != nil {
				return err
			}
			d, err := c.DeployPreview(cmd.Context(), args[0], p.Slug)
			if err != nil {
				return err
			}
			return queued(cmd, d, wait, timeout)
		},
	}
	addPreviewRefFlags(cmd, &ref)
	cmd.Flags().BoolVar(&local, "local", false, "deploy the worktree of the current directory (uncommitted and untracked files included, ignored ones excluded) as the preview of its branch, without pushing")
	addWaitFlags(cmd, &wait, &timeout)
	return cmd
}

func newPreviewListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list APP",
		Short: "List previews with their branch state (exists, moved, gone, local, unknown), read now",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			list, err := c.Previews(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "%s has no previews; create one with `slipway preview create %s --branch BRANCH`\n", args[0], args[0])
				return nil
			}
			printPreviews(cmd.OutOrStdout(), list)
			return nil
		},
	}
}

func printPreviews(w io.Writer, list []api.Preview) {
	tw := newTable(w, "SLUG", "BRANCH", "SLOT", "BRANCH STATE", "DEPLOYMENT", "STATE")
	for _, p := range list {
		state, dep, branchState := "-", "-", p.BranchState
		if p.Deployment != nil {
			dep, state = p.Deployment.ID, p.Deployment.State
		}
		if p.Deleting {
			state = "deleting"
		}
		if branchState == "" {
			branchState = "-"
		}
		slot := p.Slot
		if slot == "" {
			slot = "-"
		}
		tw.row(p.Slug, p.Branch, slot, branchState, dep, state)
	}
	_ = tw.flush()
	for _, p := range list {
		if p.BranchStateErr != "" {
			fmt.Fprintf(w, "%s: branch state unknown: %s\n", p.Slug, p.BranchStateErr)
		}
		for _, warning := range p.Warnings {
			fmt.Fprintf(w, "%s: warning: %s\n", p.Slug, warning)
		}
	}
}

func newPreviewDeleteCommand() *cobra.Command {
	var ref previewRef
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete APP --branch BRANCH [--slot SLOT] --yes",
		Short: "Delete a preview with everything it runs and all of its volumes",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := ref.check(); err != nil {
				return err
			}
			if !yes {
				return fmt.Errorf("--yes: deleting the preview of %s removes its volumes and their data; pass --yes to confirm (confirmation_required)", ref)
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			p, err := findPreview(cmd.Context(), c, args[0], ref)
			if err != nil {
				return err
			}
			if _, err := c.DeletePreview(cmd.Context(), args[0], p.Slug); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "preview %s is being deleted: its services, routes and volumes are removed, then it leaves the list\n", p.Slug)
			return nil
		},
	}
	addPreviewRefFlags(cmd, &ref)
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the deletion")
	return cmd
}

func newPreviewPruneCommand() *cobra.Command {
	var branchGone, yes bool
	cmd := &cobra.Command{
		Use:   "prune APP --branch-gone [--yes]",
		Short: "Delete the previews whose branch is gone (lists them without --yes)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !branchGone {
				return fmt.Errorf("--branch-gone: previews are only pruned when their branch is gone (prune_criterion_missing)")
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			found, err := c.PrunePreviews(cmd.Context(), args[0], api.PreviewPruneRequest{BranchGone: true})
			if err != nil {
				return err
			}
			if len(found.Gone) == 0 {
				fmt.Fprintf(out, "no preview of %s has a gone branch\n", args[0])
				return nil
			}
			if !yes {
				fmt.Fprintln(out, "these previews' branches are gone:")
				printPreviews(out, found.Gone)
				fmt.Fprintf(out, "delete them with: slipway preview prune %s --branch-gone --yes\n", args[0])
				return nil
			}
			// Only what was just listed is deleted, and only if the daemon
			// still finds its branch gone.
			slugs := make([]string, 0, len(found.Gone))
			for _, p := range found.Gone {
				slugs = append(slugs, p.Slug)
			}
			res, err := c.PrunePreviews(cmd.Context(), args[0], api.PreviewPruneRequest{BranchGone: true, Confirm: true, Slugs: slugs})
			if err != nil {
				return err
			}
			for _, p := range res.Gone {
				fmt.Fprintf(out, "deleting preview %s (branch %s is gone)\n", p.Slug, p.Branch)
			}
			for _, p := range res.Kept {
				fmt.Fprintf(out, "kept preview %s: branch %s is no longer confirmed gone\n", p.Slug, p.Branch)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&branchGone, "branch-gone", false, "prune previews whose branch is gone from the repository")
	cmd.Flags().BoolVar(&yes, "yes", false, "delete them (the daemon checks every branch again first)")
	return cmd
}

func newPreviewURLCommand() *cobra.Command {
	var ref previewRef
	cmd := &cobra.Command{
		Use:   "url APP --branch BRANCH [--slot SLOT]",
		Short: "Print the URLs the preview's routes answer at",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := ref.client()
			if err != nil {
				return err
			}
			p, err := findPreview(cmd.Context(), c, args[0], ref)
			if err != nil {
				return err
			}
			if p, err = c.Preview(cmd.Context(), args[0], p.Slug); err != nil {
				return err
			}
			if len(p.URLs) == 0 {
				return fmt.Errorf("preview %s serves no routes yet (routes go live when a deployment succeeds) (routes_missing)", p.Slug)
			}
			for _, u := range p.URLs {
				line := u.URL
				if line == "" {
					line = u.Hostname
				}
				if u.Visibility == "private" {
					line += "\t(private)"
				}
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			return nil
		},
	}
	addPreviewRefFlags(cmd, &ref)
	return cmd
}
