package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Schedule kinds.
const (
	ScheduleJob    = "job"
	ScheduleBackup = "backup"
)

// Schedule is one scheduled job or scheduled backup of an environment's
// current deployment. Spec is the rendered schedule (manifest.ParseSchedule).
type Schedule struct {
	ID            string
	TeamID        string
	ApplicationID string
	EnvironmentID string
	Kind          string
	Name          string
	Spec          string
	// Subject is what a scheduled backup copies: "volume:<name>" or
	// "postgres:<service>".
	Subject      string
	Concurrency  string
	DeploymentID string
	NextRunAt    time.Time
	LastRunAt    *time.Time
}

// ScheduleParams is one entry of SetEnvironmentSchedules. NextRunAt is
// used for a new entry or one whose Spec changed; an unchanged one keeps
// its next run.
type ScheduleParams struct {
	Kind        string
	Name        string
	Spec        string
	Subject     string
	Concurrency string
	NextRunAt   time.Time
}

const scheduleColumns = `id, team_id, application_id, environment_id, kind, name, spec, subject, concurrency,
	deployment_id, next_run_at, last_run_at`

func scanSchedule(row pgx.Row) (Schedule, error) {
	var s Schedule
	err := row.Scan(&s.ID, &s.TeamID, &s.ApplicationID, &s.EnvironmentID, &s.Kind, &s.Name, &s.Spec, &s.Subject,
		&s.Concurrency, &s.DeploymentID, &s.NextRunAt, &s.LastRunAt)
	return s, err
}

// SetEnvironmentSchedules makes ps the environment's whole set of
// schedules, declared by deploymentID: entries it lacks are removed.
func (s *Store) SetEnvironmentSchedules(ctx context.Context, teamID, appID, envID, deploymentID string, ps []ScheduleParams) error {
	const op = "set environment schedules"
	n := len(ps)
	kinds, names, specs, subjects, concs := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	nexts, ids := make([]time.Time, n), make([]string, n)
	for i, p := range ps {
		kinds[i], names[i], specs[i], subjects[i], nexts[i], ids[i] = p.Kind, p.Name, p.Spec, p.Subject, p.NextRunAt, newID("sch")
		concs[i] = p.Concurrency
		if concs[i] == "" {
			concs[i] = "forbid"
		}
	}
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `
			DELETE FROM schedules s WHERE s.team_id = $1 AND s.environment_id = $2
			  AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[]) AS n(kind, name)
			                  WHERE n.kind = s.kind AND n.name = s.name)`,
			teamID, envID, kinds, names); err != nil {
			return wrap(op, err)
		}
		_, err := tx.db.Exec(ctx, `
			INSERT INTO schedules (id, team_id, application_id, environment_id, kind, name, spec, subject, concurrency,
				deployment_id, next_run_at)
			SELECT n.id, $1, $2, $3, n.kind, n.name, n.spec, n.subject, n.concurrency, $4, n.next_run_at
			FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::timestamptz[])
				AS n(id, kind, name, spec, subject, concurrency, next_run_at)
			ON CONFLICT (environment_id, kind, name) DO UPDATE SET
				concurrency = EXCLUDED.concurrency, deployment_id = EXCLUDED.deployment_id, subject = EXCLUDED.subject,
				next_run_at = CASE WHEN schedules.spec = EXCLUDED.spec THEN schedules.next_run_at ELSE EXCLUDED.next_run_at END,
				spec = EXCLUDED.spec, updated_at = now()`,
			teamID, appID, envID, deploymentID, ids, kinds, names, specs, subjects, concs, nexts)
		return wrap(op, err)
	})
}

// ListSchedules returns the environment's schedules by kind and name.
func (s *Store) ListSchedules(ctx context.Context, teamID, envID string) ([]Schedule, error) {
	rows, err := s.db.Query(ctx, `SELECT `+scheduleColumns+` FROM schedules
		WHERE team_id = $1 AND environment_id = $2 ORDER BY kind, name`, teamID, envID)
	if err != nil {
		return nil, wrap("list schedules", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Schedule, error) { return scanSchedule(r) })
	return out, wrap("list schedules", err)
}

// GetSchedule returns one schedule of the environment.
func (s *Store) GetSchedule(ctx context.Context, teamID, envID, kind, name string) (Schedule, error) {
	sc, err := scanSchedule(s.db.QueryRow(ctx, `SELECT `+scheduleColumns+` FROM schedules
		WHERE team_id = $1 AND environment_id = $2 AND kind = $3 AND name = $4`, teamID, envID, kind, name))
	return sc, wrap("get schedule", err)
}

// ClaimDueSchedules locks up to limit schedules whose next run is at or
// before now, skipping rows another worker holds. It spans teams (the
// periodic tick) and must run inside WithTx; the caller moves each one's
// next run with AdvanceSchedule in the same transaction.
func (s *Store) ClaimDueSchedules(ctx context.Context, now time.Time, limit int) ([]Schedule, error) {
	const op = "claim due schedules"
	if s.tx == nil {
		return nil, errNotInTx(op)
	}
	rows, err := s.db.Query(ctx, `SELECT `+scheduleColumns+` FROM schedules
		WHERE next_run_at <= $1 ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Schedule, error) { return scanSchedule(r) })
	return out, wrap(op, err)
}

// AdvanceSchedule records a run of the schedule at ranAt and its next run.
func (s *Store) AdvanceSchedule(ctx context.Context, teamID, id string, ranAt, next time.Time) error {
	return s.execOne(ctx, "advance schedule", `UPDATE schedules SET last_run_at = $3, next_run_at = $4, updated_at = now()
		WHERE team_id = $1 AND id = $2`, teamID, id, ranAt, next)
}
