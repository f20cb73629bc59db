package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// newNodeCommand is `slipway node`: the Swarm's machines, for
// installation admins. Operators label them with Docker itself
// (docs/cluster.md): docker node update --label-add dev.slipway.ingress=true NODE.
func newNodeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "node",
		Aliases: []string{"nodes"},
		Short:   "The Swarm's nodes (installation admins)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the Swarm's nodes: role, availability, state, engine, CPU, memory and Slipway labels",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			nodes, err := c.Nodes(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "HOSTNAME\tROLE\tAVAILABILITY\tSTATE\tENGINE\tCPUS\tMEMORY\tLABELS")
			for _, n := range nodes {
				labels := strings.Join(n.LabelList(), ",")
				if labels == "" {
					labels = "-"
				}
				role := n.Role
				if n.Leader {
					role += " (leader)"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%g\t%s\t%s\n", n.Hostname, role, n.Availability, n.State, n.EngineVersion,
					n.CPUs, bytesText(n.MemoryBytes), labels)
			}
			return w.Flush()
		},
	})
	return cmd
}

// bytesText is a memory size in GiB or MiB.
func bytesText(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", n>>20)
}
