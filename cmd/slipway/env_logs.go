package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
)

// newEnvLogsCommand is `slipway env logs APP ENV SERVICE`, the logs page
// of a service: the last lines merged across replicas, each labelled with
// its time and task, and with --follow the new ones as they come.
func newEnvLogsCommand() *cobra.Command {
	var o client.ServiceLogOptions
	var since string
	cmd := &cobra.Command{
		Use:   "logs APP ENV SERVICE",
		Short: "Print a running service's output, each line with its time and replica",
		Long: `Print what a running service wrote, merged across its replicas in time
order: one line each, "TIME TASK TEXT" (TASK is the replica, like web.2).
--tail is the number of last lines (1–5000, default 500), --since keeps
only lines written after a time (RFC 3339) or a duration ago (10m, 2h),
and --follow keeps printing new lines until interrupted.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return err
				}
				o.Since = t
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			var last time.Time
			show := func(l api.ServiceLogLine) error {
				last = l.Time
				_, err := fmt.Fprintf(out, "%s %s %s\n", l.Time.UTC().Format("2006-01-02T15:04:05.000000000Z"), l.Task, l.Text)
				return err
			}
			for {
				err := c.ServiceLogs(cmd.Context(), args[0], args[1], args[2], o, show)
				if !o.Follow || !errors.Is(err, io.EOF) {
					return err
				}
				// The server ends a followed stream after a while: go on
				// after the last line printed.
				if !last.IsZero() {
					o.Since = last.Add(time.Nanosecond)
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "keep printing new lines")
	cmd.Flags().IntVar(&o.Tail, "tail", 0, "the last lines only, 1–5000 (default 500)")
	cmd.Flags().StringVar(&since, "since", "", "only lines after this RFC 3339 time, or this long ago (10m, 2h)")
	return cmd
}

// parseSince reads --since: an RFC 3339 time or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(strings.TrimSpace(s)); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since: %q is neither an RFC 3339 time nor a duration like 10m (since_invalid)", s)
}
