package service

import (
	"context"
	"errors"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/store"
)

// checkSaveQuotas refuses a save, in its transaction, that would take the
// team past a quota: the application it created, the environments it
// declared, the volumes it added, or the replicas, CPU and memory its
// environments would run (each rendered as a plan renders it; one that
// does not render yet is checked by the pipeline when it deploys).
func checkSaveQuotas(ctx context.Context, tx *store.Store, a Actor, previous, m *manifest.Manifest, envs []store.Environment, res *ApplyResult) error {
	var created int64
	if res.Created {
		created = 1
	}
	if err := quota.CheckCounts(ctx, tx, a.TeamID,
		quota.Add{Quota: quota.Applications, N: created, Field: "metadata.name"},
		quota.Add{Quota: quota.Environments, N: int64(len(res.CreatedEnvironments)), Field: "spec.environments"},
		quota.Add{Quota: quota.Volumes, N: volumesOf(m) - volumesOf(previous), Field: "spec.volumes"},
	); err != nil {
		return quotaInput(err)
	}
	var next quota.Needs
	ids := make([]string, 0, len(envs))
	for _, env := range envs {
		rendered, errs := manifest.Render(m, planRenderContext(m, "", env))
		if len(errs) > 0 {
			return nil
		}
		n := quota.NeedsOf(rendered)
		next.Replicas += n.Replicas
		next.CPUMillis += n.CPUMillis
		next.MemoryBytes += n.MemoryBytes
		ids = append(ids, env.ID)
	}
	return quotaInput(quota.CheckResources(ctx, tx, a.TeamID, ids, next, "spec.services"))
}

// quotaInput turns a quota refusal into the field error forms and the API
// show: quota_exceeded on the field that asked, with the quota, its limit
// and the use as details.
func quotaInput(err error) error {
	var qe *quota.Error
	if errors.As(err, &qe) {
		return &InputError{Field: qe.Field, Code: quota.Code, Message: qe.Error(), Details: qe.Details()}
	}
	return err
}

func volumesOf(m *manifest.Manifest) int64 {
	if m == nil {
		return 0
	}
	return int64(len(m.Spec.Volumes))
}
