package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Job run states and origins.
const (
	RunQueued    = "queued"
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
	RunSkipped   = "skipped"
	RunStopped   = "stopped"

	FromSchedule = "scheduled"
	ByHand       = "manual"
)

// JobRun is one run of a scheduled job. Output holds the last lines of
// what it printed.
type JobRun struct {
	ID            string
	TeamID        string
	ApplicationID string
	EnvironmentID string
	Job           string
	Origin        string
	State         string
	ScheduledFor  *time.Time
	DeploymentID  string
	ServiceName   string
	ExitCode      *int
	Output        string
	Message       string
	Actor         string
	StartedAt     *time.Time
	EndedAt       *time.Time
	CreatedAt     time.Time
}

// JobRunParams creates a queued run.
type JobRunParams struct {
	ApplicationID string
	EnvironmentID string
	Job           string
	Origin        string
	ScheduledFor  *time.Time
	Actor         string
}

const jobRunColumns = `id, team_id, application_id, environment_id, job, origin, state, scheduled_for,
	deployment_id, service_name, exit_code, output, message, actor, started_at, ended_at, created_at`

func scanJobRun(row pgx.Row) (JobRun, error) {
	var r JobRun
	err := row.Scan(&r.ID, &r.TeamID, &r.ApplicationID, &r.EnvironmentID, &r.Job, &r.Origin, &r.State,
		&r.ScheduledFor, &r.DeploymentID, &r.ServiceName, &r.ExitCode, &r.Output, &r.Message, &r.Actor,
		&r.StartedAt, &r.EndedAt, &r.CreatedAt)
	return r, err
}

// CreateJobRun records a queued run.
func (s *Store) CreateJobRun(ctx context.Context, teamID string, p JobRunParams) (JobRun, error) {
	r, err := scanJobRun(s.db.QueryRow(ctx, `
		INSERT INTO job_runs (id, team_id, application_id, environment_id, job, origin, scheduled_for, actor, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp()) RETURNING `+jobRunColumns,
		newID("run"), teamID, p.ApplicationID, p.EnvironmentID, p.Job, p.Origin, p.ScheduledFor, p.Actor))
	return r, wrap("create job run", err)
}

// GetJobRun returns one of the team's runs.
func (s *Store) GetJobRun(ctx context.Context, teamID, id string) (JobRun, error) {
	r, err := scanJobRun(s.db.QueryRow(ctx, `SELECT `+jobRunColumns+` FROM job_runs WHERE team_id = $1 AND id = $2`, teamID, id))
	return r, wrap("get job run", err)
}

// ListJobRuns returns the environment's runs, newest first; job "" lists
// every job's.
func (s *Store) ListJobRuns(ctx context.Context, teamID, envID, job string, limit int) ([]JobRun, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	rows, err := s.db.Query(ctx, `SELECT `+jobRunColumns+` FROM job_runs
		WHERE team_id = $1 AND environment_id = $2 AND ($3 = '' OR job = $3)
		ORDER BY created_at DESC, id DESC LIMIT $4`, teamID, envID, job, limit)
	if err != nil {
		return nil, wrap("list job runs", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (JobRun, error) { return scanJobRun(r) })
	return out, wrap("list job runs", err)
}

// RunningJobRuns returns the job's runs in state running other than
// exceptID, oldest first.
func (s *Store) RunningJobRuns(ctx context.Context, teamID, envID, job, exceptID string) ([]JobRun, error) {
	rows, err := s.db.Query(ctx, `SELECT `+jobRunColumns+` FROM job_runs
		WHERE team_id = $1 AND environment_id = $2 AND job = $3 AND state = 'running' AND id <> $4
		ORDER BY created_at`, teamID, envID, job, exceptID)
	if err != nil {
		return nil, wrap("list running job runs", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (JobRun, error) { return scanJobRun(r) })
	return out, wrap("list running job runs", err)
}

// StartJobRun moves a queued run to running on the Swarm service named
// serviceName, built from deploymentID.
func (s *Store) StartJobRun(ctx context.Context, teamID, id, deploymentID, serviceName string, at time.Time) error {
	return s.execOne(ctx, "start job run", `UPDATE job_runs SET state = 'running', deployment_id = $3,
		service_name = $4, started_at = coalesce(started_at, $5)
		WHERE team_id = $1 AND id = $2 AND state IN ('queued', 'running')`, teamID, id, deploymentID, serviceName, at)
}

// JobRunOutcome is how a run ended.
type JobRunOutcome struct {
	State    string
	ExitCode *int
	Output   string
	Message  string
	EndedAt  time.Time
}

// FinishJobRun records a run's end; a run that already ended keeps its
// first outcome.
func (s *Store) FinishJobRun(ctx context.Context, teamID, id string, o JobRunOutcome) error {
	return s.execOne(ctx, "finish job run", `UPDATE job_runs SET state = $3, exit_code = $4, output = $5,
		message = $6, ended_at = $7
		WHERE team_id = $1 AND id = $2 AND state IN ('queued', 'running')`,
		teamID, id, o.State, o.ExitCode, o.Output, o.Message, o.EndedAt)
}
