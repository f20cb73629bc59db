package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
)

// defaultWaitTimeout bounds --wait and `deployment wait`.
const defaultWaitTimeout = 15 * time.Minute

// pollInterval is how often a wait reads the deployment; tests shorten it.
var pollInterval = time.Second

// Exit codes of a wait: the deployment ended badly, or the wait gave up.
const (
	exitDeploymentFailed = 1
	exitWaitTimeout      = 2
)

// newDeploymentCommand is `slipway deployment`: follow, show and cancel
// deployments.
func newDeploymentCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "deployment",
		Aliases: []string{"deployments", "dep"},
		Short:   "Follow, show and cancel deployments",
	}
	var timeout time.Duration
	wait := &cobra.Command{
		Use:   "wait ID",
		Short: "Follow a deployment until it ends; exit 0 when it succeeded",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			return waitDeployments(cmd.Context(), c, cmd.OutOrStdout(), timeout, args[0])
		},
	}
	addTimeoutFlag(wait, &timeout)
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a deployment's state, steps and events",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			d, err := c.Deployment(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			printDeployment(cmd.OutOrStdout(), d)
			return nil
		},
	}
	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a deployment that has not finished",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			d, err := c.CancelDeployment(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deployment %s %s\n", d.ID, d.State)
			return nil
		},
	}
	cmd.AddCommand(wait, show, cancel)
	return cmd
}

func addTimeoutFlag(cmd *cobra.Command, timeout *time.Duration) {
	cmd.Flags().DurationVar(timeout, "timeout", defaultWaitTimeout, "give up waiting after this long (the deployment goes on)")
}

// printDeployment writes a deployment's summary, steps and events.
func printDeployment(out io.Writer, d api.Deployment) {
	fmt.Fprintf(out, "deployment:  %s\n", d.ID)
	fmt.Fprintf(out, "environment: %s (%s)\n", d.Environment, d.EnvironmentID)
	fmt.Fprintf(out, "state:       %s\n", d.State)
	fmt.Fprintf(out, "revision:    %d, origin %s, by %s\n", d.Revision, d.Origin, d.Actor)
	if d.SpecHash != "" {
		fmt.Fprintf(out, "spec hash:   %s\n", d.SpecHash)
	}
	if d.ErrorCode != "" {
		fmt.Fprintf(out, "error:       %s: %s\n", d.ErrorCode, d.ErrorMessage)
	}
	if len(d.Steps) > 0 {
		fmt.Fprintln(out, "steps:")
		for _, s := range d.Steps {
			line := fmt.Sprintf("  %-10s %s", s.State, s.Name)
			if s.FinishedAt != nil {
				line += fmt.Sprintf(" (%s)", s.FinishedAt.Sub(s.StartedAt).Round(100*time.Millisecond))
			}
			if s.Message != "" {
				line += ": " + s.Message
			}
			fmt.Fprintln(out, line)
		}
	}
	if len(d.Events) > 0 {
		fmt.Fprintln(out, "events:")
		for _, e := range d.Events {
			fmt.Fprintf(out, "  %s %s %s %s\n", e.CreatedAt.Format(time.RFC3339), e.Verb, e.Actor, string(e.Details))
		}
	}
}

// waitDeployments follows deployments until each has ended, printing each
// step as it starts and finishes. It returns nil when all succeeded, and
// an *exitError naming the reason (error code, message, failing step)
// otherwise.
func waitDeployments(ctx context.Context, c *client.Client, out io.Writer, timeout time.Duration, ids ...string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p := newProgress(out, len(ids) > 1)
	var failures []string
	for _, id := range ids {
		d, err := followDeployment(ctx, c, p, id)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			p.settle()
			return &exitError{code: exitWaitTimeout, err: fmt.Errorf("--timeout %s: deployment %s is still %s (wait_timeout); follow it with `slipway deployment wait %s`", timeout, id, d.State, id)}
		case err != nil:
			return err
		case d.State != "succeeded":
			failures = append(failures, failureReason(d))
		}
	}
	p.settle()
	if len(failures) > 0 {
		return &exitError{code: exitDeploymentFailed, err: errors.New(strings.Join(failures, "; "))}
	}
	return nil
}

// followDeployment polls one deployment until it is terminal; on a
// timeout it returns the last deployment read with the context's error.
func followDeployment(ctx context.Context, c *client.Client, p *progress, id string) (api.Deployment, error) {
	var last api.Deployment
	for {
		d, err := c.Deployment(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, err
		}
		last = d
		p.update(d)
		if d.Terminal {
			p.finish(d)
			return d, nil
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// failureReason says why a deployment did not succeed: its error code and
// message and the step that failed.
func failureReason(d api.Deployment) string {
	msg := fmt.Sprintf("deployment %s of %s %s", d.ID, d.Environment, d.State)
	if d.ErrorCode != "" {
		msg += fmt.Sprintf(": %s: %s", d.ErrorCode, d.ErrorMessage)
	}
	for _, s := range d.Steps {
		if s.State == "failed" {
			msg += " (failed step " + s.Name
			if s.Message != "" && s.Message != d.ErrorMessage {
				msg += ": " + s.Message
			}
			msg += ")"
			break
		}
	}
	return msg
}

// progress prints step transitions. On a terminal the running step's line
// is redrawn with its elapsed time; elsewhere each transition is one
// plain line, so logs stay readable.
type progress struct {
	out      io.Writer
	tty      bool
	prefixed bool
	seen     map[string]string // deployment/step -> state printed
	pending  string            // the redrawable line on a terminal, if any
}

func newProgress(out io.Writer, prefixed bool) *progress {
	return &progress{out: out, tty: isTerminal(out), prefixed: prefixed, seen: map[string]string{}}
}

// isTerminal reports whether w is a character device, i.e. a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (p *progress) label(d api.Deployment, step string) string {
	if p.prefixed {
		return d.Environment + ": " + step
	}
	return step
}

func (p *progress) update(d api.Deployment) {
	for _, s := range d.Steps {
		key := d.ID + "/" + s.Name
		prev := p.seen[key]
		if prev == s.State && s.State != "running" {
			continue
		}
		p.seen[key] = s.State
		switch s.State {
		case "running":
			elapsed := time.Since(s.StartedAt).Round(time.Second)
			if p.tty {
				p.redraw(fmt.Sprintf("… %s (%s)", p.label(d, s.Name), elapsed))
			} else if prev != "running" {
				p.line(fmt.Sprintf("started   %s", p.label(d, s.Name)))
			}
		default:
			line := fmt.Sprintf("%-9s %s", s.State, p.label(d, s.Name))
			if s.FinishedAt != nil {
				line += fmt.Sprintf(" in %s", s.FinishedAt.Sub(s.StartedAt).Round(100*time.Millisecond))
			}
			if s.Message != "" {
				line += ": " + s.Message
			}
			p.line(line)
		}
	}
}

func (p *progress) finish(d api.Deployment) {
	line := fmt.Sprintf("deployment %s %s", d.ID, d.State)
	if p.prefixed {
		line = d.Environment + ": " + line
	}
	if d.StartedAt != nil && d.FinishedAt != nil {
		line += fmt.Sprintf(" in %s", d.FinishedAt.Sub(*d.StartedAt).Round(100*time.Millisecond))
	}
	p.line(line)
}

// line prints a permanent line, replacing a pending redrawable one.
func (p *progress) line(s string) {
	if p.pending != "" {
		fmt.Fprint(p.out, "\r\033[K")
		p.pending = ""
	}
	fmt.Fprintln(p.out, s)
}

func (p *progress) redraw(s string) {
	fmt.Fprint(p.out, "\r\033[K"+s)
	p.pending = s
}

// settle ends a pending redrawable line.
func (p *progress) settle() {
	if p.pending != "" {
		fmt.Fprintln(p.out)
		p.pending = ""
	}
}
