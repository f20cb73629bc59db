package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/app/service"
)

// addPromotionCommands adds `env promote` and `env source`.
func addPromotionCommands(env *cobra.Command) {
	env.AddCommand(newEnvPromoteCommand(), newEnvSourceCommand())
}

// addReleaseCommands adds `app releases`.
func addReleaseCommands(app *cobra.Command) {
	app.AddCommand(newAppReleasesCommand())
}

func newEnvPromoteCommand() *cobra.Command {
	var wait, plan bool
	var timeout time.Duration
	var req api.PromoteRequest
	cmd := &cobra.Command{
		Use:   "promote APP ENV [--plan] [--deployment ID | --release ID]",
		Short: "Deploy the release its source environment runs (or an earlier one) to an environment, without building",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if req.DeploymentID != "" && req.ReleaseID != "" {
				return fmt.Errorf("--release: give --deployment or --release, not both (promotion_options_conflict)")
			}
			if wait && plan {
				return fmt.Errorf("--wait: a plan starts nothing to wait for (wait_without_deploy)")
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			req.Plan = plan
			res, err := c.Promote(cmd.Context(), args[0], args[1], req)
			var ce *client.Error
			if errors.As(err, &ce) && ce.Details["problems"] != nil {
				printProblems(cmd.ErrOrStderr(), ce.Details["problems"])
			}
			if err != nil {
				return err
			}
			printPromotionPlan(cmd.OutOrStdout(), res.Plan)
			if res.Deployment == nil {
				return nil
			}
			return queued(cmd, *res.Deployment, wait, timeout)
		},
	}
	cmd.Flags().BoolVar(&plan, "plan", false, "show what the promotion would do and change nothing")
	cmd.Flags().StringVar(&req.DeploymentID, "deployment", "", "the source deployment you reviewed; refused once the source has moved on")
	cmd.Flags().StringVar(&req.ReleaseID, "release", "", "deploy this earlier release instead (any environment)")
	addWaitFlags(cmd, &wait, &timeout)
	return cmd
}

// printProblems lists every refused precondition, one a line.
func printProblems(w io.Writer, raw any) {
	list, _ := raw.([]any)
	for _, p := range list {
		m, _ := p.(map[string]any)
		fmt.Fprintf(w, "  %v (%v): %v\n", m["code"], m["field"], m["message"])
	}
}

func printPromotionPlan(w io.Writer, p service.PromotionPlan) {
	from := "release " + p.ReleaseID
	if p.SourceEnvironment != "" {
		from = fmt.Sprintf("%s's current deployment %s", p.SourceEnvironment, p.SourceDeployment)
	}
	fmt.Fprintf(w, "%s: %s from %s (release %s built in %s, revision %d)\n",
		p.Environment, p.Origin, from, p.ReleaseID, p.ReleaseEnvironment, p.ReleaseRevision)
	for _, img := range p.Images {
		state := "not checked"
		if img.Present != nil {
			state = map[bool]string{true: "present", false: "MISSING"}[*img.Present]
		}
		id := img.ImageID
		if id == "" {
			id = img.Reference
		}
		fmt.Fprintf(w, "  image %s: %s %s\n", img.Service, id, state)
	}
	for _, ch := range p.Changes {
		fmt.Fprintf(w, "  %s %s", ch.Kind, ch.Path)
		if ch.Before != "" || ch.After != "" {
			fmt.Fprintf(w, ": %s -> %s", ch.Before, ch.After)
		}
		fmt.Fprintln(w)
	}
	if len(p.NewVolumes) > 0 {
		fmt.Fprintf(w, "  volumes created empty: %s\n", strings.Join(p.NewVolumes, ", "))
	}
	for _, s := range p.Secrets {
		fmt.Fprintf(w, "  secrets %s: %s\n", s.Code, strings.Join(s.Names, ", "))
	}
	for _, pr := range p.Problems {
		fmt.Fprintf(w, "  refused: %s (%s): %s\n", pr.Code, pr.Field, pr.Message)
	}
	for _, wr := range p.Warnings {
		fmt.Fprintf(w, "  warning: %s (%s): %s\n", wr.Code, wr.Path, wr.Message)
	}
}

func newEnvSourceCommand() *cobra.Command {
	var req api.SourceRequest
	cmd := &cobra.Command{
		Use:   "source APP ENV (--promote-from SRC | --tracking)",
		Short: "Make an undeclared environment receive promotions from another, or track the manifest again",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (req.PromoteFrom == "") == !req.Tracking {
				return fmt.Errorf("--promote-from: give exactly one of --promote-from ENV and --tracking (environment_source_conflict)")
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			out, err := c.SetEnvironmentSource(cmd.Context(), args[0], args[1], req)
			if err != nil {
				return err
			}
			if out.PromoteFrom != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "%s now receives releases promoted from %s\n", out.Environment, out.PromoteFrom)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s now deploys the application's manifest\n", out.Environment)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&req.PromoteFrom, "promote-from", "", "the environment it receives releases from")
	cmd.Flags().BoolVar(&req.Tracking, "tracking", false, "deploy the saved manifest (or its branch) again")
	return cmd
}

func newAppReleasesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "releases APP",
		Short: "List an application's releases and the environments that received them",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			list, err := c.Releases(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RELEASE\tBUILT IN\tREVISION\tFINISHED\tRECEIVED BY")
			for _, r := range list.Releases {
				var got []string
				for _, x := range r.Receivers {
					got = append(got, fmt.Sprintf("%s (%s, %s)", x.Environment, x.DeploymentID, x.State))
				}
				finished := ""
				if r.FinishedAt != nil {
					finished = r.FinishedAt.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.ID, r.Environment, r.Revision, finished, strings.Join(got, ", "))
			}
			return tw.Flush()
		},
	}
}
