package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Quotas holds one value per quota; nil is "not set" (for a team: the
// default; for the defaults: unlimited).
type Quotas struct {
	Applications          *int64
	Environments          *int64
	Previews              *int64
	Replicas              *int64
	CPUMillis             *int64
	MemoryBytes           *int64
	Volumes               *int64
	Secrets               *int64
	ConcurrentBuilds      *int64
	ConcurrentDeployments *int64
}

const quotaColumns = `applications, environments, previews, replicas, cpu_millis, memory_bytes, volumes, secrets, concurrent_builds, concurrent_deployments`

func (q *Quotas) fields() []any {
	return []any{&q.Applications, &q.Environments, &q.Previews, &q.Replicas, &q.CPUMillis, &q.MemoryBytes,
		&q.Volumes, &q.Secrets, &q.ConcurrentBuilds, &q.ConcurrentDeployments}
}

func (q Quotas) values() []any {
	return []any{q.Applications, q.Environments, q.Previews, q.Replicas, q.CPUMillis, q.MemoryBytes,
		q.Volumes, q.Secrets, q.ConcurrentBuilds, q.ConcurrentDeployments}
}

// SetQuotaDefaults replaces the installation's default quotas (the
// daemon's [quotas] settings).
func (s *Store) SetQuotaDefaults(ctx context.Context, q Quotas) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO quota_defaults (singleton, `+quotaColumns+`) VALUES (true, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (singleton) DO UPDATE SET (`+quotaColumns+`, updated_at) =
			(EXCLUDED.applications, EXCLUDED.environments, EXCLUDED.previews, EXCLUDED.replicas, EXCLUDED.cpu_millis,
			 EXCLUDED.memory_bytes, EXCLUDED.volumes, EXCLUDED.secrets, EXCLUDED.concurrent_builds,
			 EXCLUDED.concurrent_deployments, now())`, q.values()...)
	return wrap("set quota defaults", err)
}

// GetQuotas returns the installation's defaults and the team's overrides.
func (s *Store) GetQuotas(ctx context.Context, teamID string) (defaults, overrides Quotas, err error) {
	err = s.db.QueryRow(ctx, `SELECT `+quotaColumns+` FROM quota_defaults`).Scan(defaults.fields()...)
	if err = wrap("get quota defaults", err); err != nil && !errors.Is(err, ErrNotFound) {
		return Quotas{}, Quotas{}, err
	}
	err = s.db.QueryRow(ctx, `SELECT `+quotaColumns+` FROM team_quotas WHERE team_id = $1`, teamID).Scan(overrides.fields()...)
	if err = wrap("get team quotas", err); err != nil && !errors.Is(err, ErrNotFound) {
		return Quotas{}, Quotas{}, err
	}
	return defaults, overrides, nil
}

// SetTeamQuotas replaces the team's overrides; nil fields return to the
// default.
func (s *Store) SetTeamQuotas(ctx context.Context, teamID string, q Quotas) error {
	args := append([]any{teamID}, q.values()...)
	_, err := s.db.Exec(ctx, `
		INSERT INTO team_quotas (team_id, `+quotaColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (team_id) DO UPDATE SET (`+quotaColumns+`, updated_at) =
			(EXCLUDED.applications, EXCLUDED.environments, EXCLUDED.previews, EXCLUDED.replicas, EXCLUDED.cpu_millis,
			 EXCLUDED.memory_bytes, EXCLUDED.volumes, EXCLUDED.secrets, EXCLUDED.concurrent_builds,
			 EXCLUDED.concurrent_deployments, now())`, args...)
	return wrap("set team quotas", err)
}

// QuotaCounts is what a team holds of the counted quotas.
type QuotaCounts struct {
	Applications int64
	Environments int64 // previews not counted
	Previews     int64 // being deleted ones not counted
	Secrets      int64 // stored secret names
	// Deployments and Builds are the team's deployments a worker holds
	// now, and those of them building images.
	Deployments int64
	Builds      int64
}

// CountQuotaUse counts what the team holds now.
func (s *Store) CountQuotaUse(ctx context.Context, teamID string) (QuotaCounts, error) {
	var c QuotaCounts
	err := s.db.QueryRow(ctx, `
		SELECT
			(SELECT count(*) FROM applications WHERE team_id = $1 AND deleted_at IS NULL),
			(SELECT count(*) FROM environments e JOIN applications a ON a.team_id = e.team_id AND a.id = e.application_id
			  WHERE e.team_id = $1 AND e.kind = 'environment' AND a.deleted_at IS NULL),
			(SELECT count(*) FROM environments e JOIN applications a ON a.team_id = e.team_id AND a.id = e.application_id
			  WHERE e.team_id = $1 AND e.kind = 'preview' AND e.deleting_at IS NULL AND a.deleted_at IS NULL),
			(SELECT count(*) FROM secrets WHERE team_id = $1 AND deleted_at IS NULL),
			(SELECT count(*) FROM deployments WHERE team_id = $1 AND lease_owner IS NOT NULL AND lease_expires_at > now()
			  AND state IN ('capturing', 'preparing', 'running_jobs', 'rolling_out')),
			(SELECT count(*) FROM deployments WHERE team_id = $1 AND building_since IS NOT NULL AND lease_owner IS NOT NULL
			  AND lease_expires_at > now() AND state = 'preparing')`, teamID).
		Scan(&c.Applications, &c.Environments, &c.Previews, &c.Secrets, &c.Deployments, &c.Builds)
	return c, wrap("count quota use", err)
}

// RunningManifests returns, for each of the team's environments and
// previews (but except), the rendered manifest of its latest successful
// deployment: what runs there now.
func (s *Store) RunningManifests(ctx context.Context, teamID, except string) (map[string]json.RawMessage, error) {
	rows, err := s.db.Query(ctx, `
		SELECT DISTINCT ON (d.environment_id) d.environment_id, d.rendered_manifest
		FROM deployments d
		JOIN environments e ON e.team_id = d.team_id AND e.id = d.environment_id
		JOIN applications a ON a.team_id = d.team_id AND a.id = d.application_id
		WHERE d.team_id = $1 AND d.environment_id <> $2 AND d.state = 'succeeded'
		  AND d.rendered_manifest IS NOT NULL AND a.deleted_at IS NULL AND e.deleting_at IS NULL
		ORDER BY d.environment_id, d.finished_at DESC`, teamID, except)
	if err != nil {
		return nil, wrap("list running manifests", err)
	}
	out := map[string]json.RawMessage{}
	defer rows.Close()
	for rows.Next() {
		var env string
		var m json.RawMessage
		if err := rows.Scan(&env, &m); err != nil {
			return nil, wrap("list running manifests", err)
		}
		out[env] = m
	}
	return out, wrap("list running manifests", rows.Err())
}

// ErrTeamBusy is returned when a team already uses every slot a quota
// gives it; the caller waits its turn.
var ErrTeamBusy = errors.New("the team uses every slot of its quota")

// AcquireDeploymentSlot is AcquireDeploymentLease for a deployment that
// does not hold its lease yet: under a per-team lock, it fails with
// ErrTeamBusy while max other deployments of the team are held by
// workers. max <= 0 is no limit.
func (s *Store) AcquireDeploymentSlot(ctx context.Context, teamID, id, owner string, ttl time.Duration, max int64) error {
	return s.withinSlots(ctx, teamID, id, max, "deployment", `
		SELECT count(*) FROM deployments
		WHERE team_id = $1 AND id <> $2 AND lease_owner IS NOT NULL AND lease_expires_at > now()
		  AND state IN ('requested', 'capturing', 'preparing', 'running_jobs', 'rolling_out')`,
		func(tx *Store) error { return tx.AcquireDeploymentLease(ctx, teamID, id, owner, ttl) })
}

// ClaimBuildSlot marks the deployment as building, under the per-team
// lock, unless max other deployments of the team held by workers build
// now (ErrTeamBusy). max <= 0 is no limit.
func (s *Store) ClaimBuildSlot(ctx context.Context, teamID, id string, max int64) error {
	return s.withinSlots(ctx, teamID, id, max, "build", `
		SELECT count(*) FROM deployments
		WHERE team_id = $1 AND id <> $2 AND building_since IS NOT NULL AND state = 'preparing'
		  AND lease_owner IS NOT NULL AND lease_expires_at > now()`,
		func(tx *Store) error {
			return tx.execOne(ctx, "claim build slot", `
				UPDATE deployments SET building_since = coalesce(building_since, now()) WHERE team_id = $1 AND id = $2`, teamID, id)
		})
}

// withinSlots runs take under the team's slot lock unless countSQL (team
// id, deployment id) finds max or more slots held by others.
func (s *Store) withinSlots(ctx context.Context, teamID, id string, max int64, what, countSQL string, take func(tx *Store) error) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('slipway-team-slots:' || $1))`, teamID); err != nil {
			return wrap("lock team slots", err)
		}
		if max > 0 {
			var n int64
			if err := tx.db.QueryRow(ctx, countSQL, teamID, id).Scan(&n); err != nil {
				return wrap("count team "+what+"s", err)
			}
			if n >= max {
				return fmt.Errorf("%s slot: %d of %d held: %w", what, n, max, ErrTeamBusy)
			}
		}
		return take(tx)
	})
}

// ReleaseBuildSlot ends the deployment's build.
func (s *Store) ReleaseBuildSlot(ctx context.Context, teamID, id string) error {
	_, err := s.db.Exec(ctx, `UPDATE deployments SET building_since = NULL WHERE team_id = $1 AND id = $2`, teamID, id)
	return wrap("release build slot", err)
}

// LockTeamQuotas takes the team's quota lock for the rest of the
// transaction: quota checks of one team run one at a time.
func (s *Store) LockTeamQuotas(ctx context.Context, teamID string) error {
	if s.tx == nil {
		return errNotInTx("lock team quotas")
	}
	_, err := s.db.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('slipway-team-quotas:' || $1))`, teamID)
	return wrap("lock team quotas", err)
}

// CountDeclaredVolumes adds up the volumes the team's applications'
// current manifests declare.
func (s *Store) CountDeclaredVolumes(ctx context.Context, teamID string) (int64, error) {
	var n int64
	err := s.db.QueryRow(ctx, `
		SELECT coalesce(sum(jsonb_array_length(coalesce(r.manifest->'spec'->'volumes', '[]'::jsonb))), 0)::bigint
		FROM applications a
		JOIN manifest_revisions r ON r.team_id = a.team_id AND r.application_id = a.id AND r.revision = a.current_revision
		WHERE a.team_id = $1 AND a.deleted_at IS NULL`, teamID).Scan(&n)
	return n, wrap("count declared volumes", err)
}
