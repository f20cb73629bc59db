package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
)

// newEnvRoutesCommand is `slipway env routes APP ENV`.
func newEnvRoutesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "routes APP ENV",
		Short: "List the routes an environment serves now, with their URLs",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			routes, err := c.EnvironmentRoutes(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if len(routes) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "Environment %s of %s serves no routes yet (routes go live when a deployment succeeds).\n", args[1], args[0])
				return nil
			}
			tw := newTable(cmd.OutOrStdout(), "HOSTNAME", "VISIBILITY", "TARGET", "CERTIFICATE", "URL")
			for _, r := range routes {
				target := fmt.Sprintf("%s:%d", r.Service, r.Port)
				if r.Redirect != nil {
					target = fmt.Sprintf("redirect %d %s", r.Redirect.Status, r.Redirect.To)
				}
				u := r.URL
				if u == "" {
					u = "-"
				}
				tw.row(r.Hostname, r.Visibility, target, certificateCell(r.Certificate), u)
			}
			return tw.flush()
		},
	}
}

// certificateCell is a route's certificate state in one short cell:
// "issued (expires 2027-03-01)", "failed: <error>", "operator (expires …)".
func certificateCell(c api.RouteTLS) string {
	s := c.State
	if c.ExpiresAt != nil {
		s += " (expires " + c.ExpiresAt.UTC().Format(time.DateOnly) + ")"
	}
	if c.LastError != "" {
		msg := strings.Join(strings.Fields(c.LastError), " ")
		if r := []rune(msg); len(r) > 80 {
			msg = string(r[:77]) + "..."
		}
		s += ": " + msg
	}
	return s
}
