package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/store"
)

// storeQuotaDefaults writes the [quotas] settings where every process
// checks them (quota package). serve, worker and dev call it when they
// start; the last one to start wins, so give them the same settings.
func storeQuotaDefaults(ctx context.Context, st *store.Store, cfg config.Config) error {
	q := cfg.Quotas
	if err := st.SetQuotaDefaults(ctx, quota.Row(map[quota.Name]int64{
		quota.Applications: int64(q.Applications), quota.Environments: int64(q.Environments),
		quota.Previews: int64(q.Previews), quota.Replicas: int64(q.Replicas),
		quota.CPUMillis: q.CPUMillis, quota.MemoryBytes: q.MemoryBytes,
		quota.Volumes: int64(q.Volumes), quota.Secrets: int64(q.Secrets),
		quota.ConcurrentBuilds: int64(q.ConcurrentBuilds), quota.ConcurrentDeployments: int64(q.ConcurrentDeployments),
	})); err != nil {
		return fmt.Errorf("quota defaults: %w", err)
	}
	return nil
}

// newAdminTeamCommand is `slipway admin team`.
func newAdminTeamCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "team", Short: "Operator settings of a team: quotas"}
	cmd.AddCommand(newAdminTeamQuotaCommand())
	return cmd
}

func newAdminTeamQuotaCommand() *cobra.Command {
	var set, reset []string
	cmd := &cobra.Command{
		Use:   "quota TEAM [--set NAME=VALUE]... [--reset NAME|all]...",
		Short: "Show a team's quotas and use, or override them (stored in Postgres)",
		Long: `Show the team's quotas (TEAM is its slug or id): each quota's limit, where
it comes from (the [quotas] default or the team's own value) and what the
team uses now. --set NAME=VALUE gives the team its own value; --reset NAME
(or all) returns to the default. Quotas: ` + quotaNames() + `.
Needs DATABASE_URL.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			changes, err := parseQuotaChanges(set, reset)
			if err != nil {
				return err
			}
			st, done, err := adminStore(cmd)
			if err != nil {
				return err
			}
			defer done()
			team, err := st.GetTeamBySlug(ctx, args[0])
			if errors.Is(err, store.ErrNotFound) {
				team, err = st.GetTeam(ctx, args[0])
			}
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("TEAM: no team with slug or id %q (team_not_found)", args[0])
			}
			if err != nil {
				return err
			}
			if len(changes) > 0 {
				own, err := quota.Overrides(ctx, st, team.ID)
				if err != nil {
					return err
				}
				for n, v := range changes {
					if v == nil {
						delete(own, n)
					} else {
						own[n] = *v
					}
				}
				if err := st.SetTeamQuotas(ctx, team.ID, quota.Row(own)); err != nil {
					return err
				}
			}
			return printQuotas(ctx, cmd, st, team)
		},
	}
	addConfigFlag(cmd)
	cmd.Flags().StringArrayVar(&set, "set", nil, "NAME=VALUE: the team's own limit for a quota")
	cmd.Flags().StringArrayVar(&reset, "reset", nil, "NAME or all: back to the default")
	return cmd
}

func quotaNames() string {
	names := make([]string, len(quota.All))
	for i, n := range quota.All {
		names[i] = string(n)
	}
	return strings.Join(names, ", ")
}

// parseQuotaChanges reads --set and --reset: a value per name, nil to
// reset.
func parseQuotaChanges(set, reset []string) (map[quota.Name]*int64, error) {
	out := map[quota.Name]*int64{}
	for _, r := range reset {
		if r == "all" {
			for _, n := range quota.All {
				out[n] = nil
			}
			continue
		}
		n, ok := quota.ParseName(r)
		if !ok {
			return nil, fmt.Errorf("--reset %s: no such quota; quotas are %s (quota_unknown)", r, quotaNames())
		}
		out[n] = nil
	}
	for _, s := range set {
		k, v, ok := strings.Cut(s, "=")
		n, known := quota.ParseName(k)
		if !ok || !known {
			return nil, fmt.Errorf("--set %s: want NAME=VALUE with NAME one of %s (quota_unknown)", s, quotaNames())
		}
		val, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		min := int64(0)
		if n == quota.ConcurrentBuilds || n == quota.ConcurrentDeployments {
			min = 1
		}
		if err != nil || val < min {
			return nil, fmt.Errorf("--set %s: the value must be a whole number, at least %d (quota_value_invalid)", s, min)
		}
		out[n] = &val
	}
	return out, nil
}

func printQuotas(ctx context.Context, cmd *cobra.Command, st *store.Store, team store.Team) error {
	limits, err := quota.Get(ctx, st, team.ID)
	if err != nil {
		return err
	}
	own, err := quota.Overrides(ctx, st, team.ID)
	if err != nil {
		return err
	}
	use, err := quota.Measure(ctx, st, team.ID)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "team %s (%s)\n", team.Slug, team.ID)
	tw := newTable(out, "QUOTA", "LIMIT", "FROM", "USE")
	for _, n := range quota.All {
		limit, from := "unlimited", "default"
		if v, ok := limits[n]; ok {
			limit = quota.Format(n, v)
		}
		if _, ok := own[n]; ok {
			from = "team"
		}
		tw.row(string(n), limit, from, quota.Format(n, use[n]))
	}
	return tw.flush()
}
