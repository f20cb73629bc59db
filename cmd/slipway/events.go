package main

import (
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// newEventsCommand is `slipway events`, the audit log page: one page of the
// team's events, newest first, with the page's filters.
func newEventsCommand() *cobra.Command {
	var app, kind, actor string
	var limit int
	var before int64
	cmd := &cobra.Command{
		Use:   "events [--app APP] [--kind K] [--actor A] [--limit N] [--before ID]",
		Short: "Show the team's audit log, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			q := url.Values{}
			for k, v := range map[string]string{"application": app, "kind": kind, "actor": actor} {
				if v != "" {
					q.Set(k, v)
				}
			}
			if limit > 0 {
				q.Set("limit", strconv.Itoa(limit))
			}
			if before > 0 {
				q.Set("before", strconv.FormatInt(before, 10))
			}
			page, err := c.Events(cmd.Context(), q)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tTIME\tACTOR\tACTION\tOBJECT\tDETAILS")
			for _, e := range page.Events {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s %s\t%s\n", e.ID, e.CreatedAt.UTC().Format("2006-01-02 15:04:05"), e.Actor, e.Verb, e.ObjectType, e.ObjectID, e.Details)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if page.NextBefore > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "older events: --before %d\n", page.NextBefore)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&app, "app", "", "only events of this application (name or id), its environments and deployments")
	cmd.Flags().StringVar(&kind, "kind", "", "only events about this kind of object: application, environment, deployment, secret, member...")
	cmd.Flags().StringVar(&actor, "actor", "", "only this actor's events: user:<id>, token:<id>, github or system")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many events (1-500; default 50)")
	cmd.Flags().Int64Var(&before, "before", 0, "only events older than this id (the previous page's --before)")
	return cmd
}
