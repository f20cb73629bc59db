package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeploymentState is where a deployment is in its life.
type DeploymentState string

// Deployment states. The first five are live; the rest are terminal.
const (
	StateRequested   DeploymentState = "requested"
	StateCapturing   DeploymentState = "capturing"
	StatePreparing   DeploymentState = "preparing"
	StateRunningJobs DeploymentState = "running_jobs"
	StateRollingOut  DeploymentState = "rolling_out"
	StateSucceeded   DeploymentState = "succeeded"
	StateFailed      DeploymentState = "failed"
	StateCancelled   DeploymentState = "cancelled"
	StateSuperseded  DeploymentState = "superseded"
)

// transitions is the deployment state machine: the states each state may
// move to. Terminal states move nowhere.
var transitions = map[DeploymentState][]DeploymentState{
	StateRequested:   {StateCapturing, StateFailed, StateCancelled, StateSuperseded},
	StateCapturing:   {StatePreparing, StateFailed, StateCancelled},
	StatePreparing:   {StateRunningJobs, StateRollingOut, StateFailed, StateCancelled},
	StateRunningJobs: {StateRollingOut, StateFailed, StateCancelled},
	StateRollingOut:  {StateSucceeded, StateFailed, StateCancelled},
}

// Terminal reports whether the deployment is over.
func (s DeploymentState) Terminal() bool {
	switch s {
	case StateSucceeded, StateFailed, StateCancelled, StateSuperseded:
		return true
	}
	return false
}

// CanMoveTo reports whether the state machine allows s -> to.
func (s DeploymentState) CanMoveTo(to DeploymentState) bool {
	return slices.Contains(transitions[s], to)
}

// Origin says where a deployment came from.
type Origin string

// Deployment origins.
const (
	OriginBuild     Origin = "build"
	OriginPromotion Origin = "promotion"
	OriginRelease   Origin = "release"
	OriginRestore   Origin = "restore"
	OriginRollback  Origin = "rollback"
)

// ErrInvalidTransition is returned when a deployment is not in a state the
// requested change may start from. The concrete error is a *TransitionError.
var ErrInvalidTransition = errors.New("invalid deployment state transition")

// TransitionError reports a refused state change and the state found.
type TransitionError struct {
	ID      string
	Current DeploymentState
	To      DeploymentState
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("deployment %s is %s, cannot move to %s", e.ID, e.Current, e.To)
}

// Is makes errors.Is(err, ErrInvalidTransition) true.
func (e *TransitionError) Is(target error) bool { return target == ErrInvalidTransition }

// Deployment is one captured attempt to make an environment run a rendered
// manifest.
type Deployment struct {
	ID               string
	TeamID           string
	ApplicationID    string
	EnvironmentID    string
	State            DeploymentState
	Revision         int64
	CapturedManifest json.RawMessage // nil until captured
	RenderedManifest json.RawMessage // nil until captured
	Variables        json.RawMessage // nil until captured
	// SpecHash is manifest.SpecHash of what the deployment runs; "" until
	// captured (and for deployments captured before it was recorded).
	SpecHash     string
	Origin       Origin
	RestoredFrom string // deployment id for restore and rollback origins
	PromotedFrom string // deployment id for the promotion origin
	Actor        string
	ErrorCode    string
	ErrorMessage string
	Steps        json.RawMessage // a JSON array, the worker's progress record
	CreatedAt    time.Time
	UpdatedAt    time.Time
	StartedAt    *time.Time
	FinishedAt   *time.Time
}

// DeploymentParams are the fields of a new deployment request.
type DeploymentParams struct {
	EnvironmentID string
	Revision      int64
	Origin        Origin
	RestoredFrom  string
	PromotedFrom  string
	Actor         string
}

// Capture is what the worker pins when it captures a deployment.
type Capture struct {
	Manifest  json.RawMessage
	Rendered  json.RawMessage
	Variables json.RawMessage
	SpecHash  string
}

// DeploymentFilter narrows ListDeployments. Zero fields do not filter.
type DeploymentFilter struct {
	ApplicationID string
	EnvironmentID string
	States        []DeploymentState
	// Limit defaults to 50 and is capped at 500.
	Limit int
}

const deploymentColumns = `id, team_id, application_id, environment_id, state, revision,
	captured_manifest, rendered_manifest, variables, spec_hash, origin, coalesce(restored_from, ''),
	coalesce(promoted_from, ''), actor, error_code, error_message, steps,
	created_at, updated_at, started_at, finished_at`

func scanDeployment(row pgx.Row) (Deployment, error) {
	var d Deployment
	// The jsonb columns scan as plain bytes: Postgres has already checked
	// them, and scanning into json.RawMessage would have pgx run
	// json.Unmarshal over whole manifests on every read.
	err := row.Scan(&d.ID, &d.TeamID, &d.ApplicationID, &d.EnvironmentID, &d.State, &d.Revision,
		(*[]byte)(&d.CapturedManifest), (*[]byte)(&d.RenderedManifest), (*[]byte)(&d.Variables), &d.SpecHash, &d.Origin, &d.RestoredFrom,
		&d.PromotedFrom, &d.Actor, &d.ErrorCode, &d.ErrorMessage, (*[]byte)(&d.Steps),
		&d.CreatedAt, &d.UpdatedAt, &d.StartedAt, &d.FinishedAt)
	return d, err
}

// CreateDeployment requests a deployment of one of the team's environments.
// A deployment of that environment still waiting in requested is
// superseded by this one, in the same transaction; one already running is
// left alone (this one waits behind it). The environment row is locked so
// two concurrent requests queue one behind the other.
func (s *Store) CreateDeployment(ctx context.Context, teamID string, p DeploymentParams) (Deployment, error) {
	const op = "create deployment"
	var d Deployment
	err := s.WithTx(ctx, func(tx *Store) error {
		var applicationID string
		err := tx.db.QueryRow(ctx, `
			SELECT application_id FROM environments WHERE team_id = $1 AND id = $2 FOR UPDATE`,
			teamID, p.EnvironmentID).Scan(&applicationID)
		if err != nil {
			return wrap(op, err)
		}
		// A restore stops services and copies data back: no deployment
		// may start until it is done (restore.go).
		var restoring bool
		if err := tx.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM restores WHERE team_id = $1 AND environment_id = $2
			AND state IN ('pending', 'stopping', 'restoring', 'starting'))`, teamID, p.EnvironmentID).Scan(&restoring); err != nil {
			return wrap(op, err)
		}
		if restoring {
			return fmt.Errorf("%s: %w", op, &ConflictError{Constraint: "restores_one_active_key", Field: "environment_id", Code: "restore_in_progress"})
		}
		if _, err := tx.db.Exec(ctx, `
			UPDATE deployments SET state = 'superseded', finished_at = clock_timestamp(), updated_at = clock_timestamp()
			WHERE team_id = $1 AND environment_id = $2 AND state = 'requested'`,
			teamID, p.EnvironmentID); err != nil {
			return wrap(op, err)
		}
		d, err = scanDeployment(tx.db.QueryRow(ctx, `
			INSERT INTO deployments (id, team_id, application_id, environment_id, revision, origin,
				restored_from, promoted_from, actor)
			VALUES ($1, $2, $3, $4, $5, $6, nullif($7, ''), nullif($8, ''), $9)
			RETURNING `+deploymentColumns,
			newID("dep"), teamID, applicationID, p.EnvironmentID, p.Revision, p.Origin,
			p.RestoredFrom, p.PromotedFrom, p.Actor))
		return wrap(op, err)
	})
	if err != nil {
		return Deployment{}, err
	}
	return d, nil
}

// GetDeployment returns one of the team's deployments.
func (s *Store) GetDeployment(ctx context.Context, teamID, id string) (Deployment, error) {
	d, err := scanDeployment(s.db.QueryRow(ctx, `
		SELECT `+deploymentColumns+` FROM deployments WHERE team_id = $1 AND id = $2`, teamID, id))
	return d, wrap("get deployment", err)
}

// ListDeployments returns the team's deployments, newest first.
func (s *Store) ListDeployments(ctx context.Context, teamID string, f DeploymentFilter) ([]Deployment, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 500)
	states := make([]string, len(f.States))
	for i, st := range f.States {
		states[i] = string(st)
	}
	rows, err := s.db.Query(ctx, `
		SELECT `+deploymentColumns+` FROM deployments
		WHERE team_id = $1
		  AND ($2 = '' OR application_id = $2)
		  AND ($3 = '' OR environment_id = $3)
		  AND (cardinality($4::text[]) = 0 OR state = ANY($4))
		ORDER BY created_at DESC, id DESC
		LIMIT $5`, teamID, f.ApplicationID, f.EnvironmentID, states, limit)
	if err != nil {
		return nil, wrap("list deployments", err)
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Deployment, error) { return scanDeployment(r) })
	return ds, wrap("list deployments", err)
}

// LatestSucceededDeployment returns the environment's most recent
// successful deployment: what a rollback restores.
func (s *Store) LatestSucceededDeployment(ctx context.Context, teamID, environmentID string) (Deployment, error) {
	d, err := scanDeployment(s.db.QueryRow(ctx, `
		SELECT `+deploymentColumns+` FROM deployments
		WHERE team_id = $1 AND environment_id = $2 AND state = 'succeeded'
		ORDER BY finished_at DESC, id DESC
		LIMIT 1`, teamID, environmentID))
	return d, wrap("latest succeeded deployment", err)
}

// TransitionDeployment moves the deployment to state to, provided it is in
// one of the states from, and every from -> to is allowed by the state
// machine. It sets started_at when the deployment leaves requested and
// finished_at when it reaches a terminal state. A deployment in another
// state fails with a *TransitionError naming the state found; starting a
// second live deployment of one environment fails with a *ConflictError
// (deployment_in_progress), which a worker answers by waiting.
func (s *Store) TransitionDeployment(ctx context.Context, teamID, id string, from []DeploymentState, to DeploymentState) (Deployment, error) {
	return s.transition(ctx, "transition deployment", teamID, id, from, to, "", "")
}

// FailDeployment moves a live deployment to failed, recording a snake_case
// error code and a message for people.
func (s *Store) FailDeployment(ctx context.Context, teamID, id, code, message string) (Deployment, error) {
	live := []DeploymentState{StateRequested, StateCapturing, StatePreparing, StateRunningJobs, StateRollingOut}
	return s.transition(ctx, "fail deployment", teamID, id, live, StateFailed, code, message)
}

func (s *Store) transition(ctx context.Context, op, teamID, id string, from []DeploymentState, to DeploymentState, code, message string) (Deployment, error) {
	states := make([]string, len(from))
	for i, f := range from {
		if !f.CanMoveTo(to) {
			return Deployment{}, fmt.Errorf("%s: %w", op, &TransitionError{ID: id, Current: f, To: to})
		}
		states[i] = string(f)
	}
	d, err := scanDeployment(s.db.QueryRow(ctx, `
		UPDATE deployments SET
			state = $4,
			started_at = CASE WHEN started_at IS NULL AND $4 <> 'requested' THEN clock_timestamp() ELSE started_at END,
			finished_at = CASE WHEN $5 THEN clock_timestamp() END,
			error_code = CASE WHEN $6 <> '' THEN $6 ELSE error_code END,
			error_message = CASE WHEN $6 <> '' THEN $7 ELSE error_message END,
			updated_at = clock_timestamp()
		WHERE team_id = $1 AND id = $2 AND state = ANY($3)
		RETURNING `+deploymentColumns,
		teamID, id, states, to, to.Terminal(), code, message))
	if errors.Is(err, pgx.ErrNoRows) {
		return Deployment{}, s.transitionRefused(ctx, op, teamID, id, to)
	}
	return d, wrap(op, err)
}

// transitionRefused explains why an update matched no row: the deployment
// is missing (ErrNotFound) or in another state (*TransitionError).
func (s *Store) transitionRefused(ctx context.Context, op, teamID, id string, to DeploymentState) error {
	var current DeploymentState
	err := s.db.QueryRow(ctx, `SELECT state FROM deployments WHERE team_id = $1 AND id = $2`, teamID, id).Scan(&current)
	if err != nil {
		return wrap(op, err)
	}
	return fmt.Errorf("%s: %w", op, &TransitionError{ID: id, Current: current, To: to})
}

// RecordCapture stores what the worker captured. It is only allowed while
// the deployment is capturing, and only once: a retry reuses the first
// capture, so the deployment never changes under its own feet.
func (s *Store) RecordCapture(ctx context.Context, teamID, id string, c Capture) (Deployment, error) {
	const op = "record capture"
	d, err := scanDeployment(s.db.QueryRow(ctx, `
		UPDATE deployments SET captured_manifest = $3, rendered_manifest = $4, variables = $5, spec_hash = $6,
			updated_at = clock_timestamp()
		WHERE team_id = $1 AND id = $2 AND state = 'capturing' AND captured_manifest IS NULL
		RETURNING `+deploymentColumns,
		teamID, id, []byte(c.Manifest), []byte(c.Rendered), []byte(c.Variables), c.SpecHash))
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.transitionRefused(ctx, op, teamID, id, StateCapturing)
		var te *TransitionError
		if errors.As(err, &te) && te.Current == StateCapturing {
			return Deployment{}, fmt.Errorf("%s: %w", op, ErrAlreadyCaptured)
		}
		return Deployment{}, err
	}
	return d, wrap(op, err)
}

// ErrAlreadyCaptured is returned by RecordCapture when the deployment holds
// a capture already: the caller must reuse it (GetDeployment).
var ErrAlreadyCaptured = errors.New("deployment already captured")

// SetDeploymentSteps replaces the live deployment's progress record (a
// JSON array the worker owns).
func (s *Store) SetDeploymentSteps(ctx context.Context, teamID, id string, steps json.RawMessage) error {
	const op = "set deployment steps"
	tag, err := s.db.Exec(ctx, `
		UPDATE deployments SET steps = $3, updated_at = clock_timestamp()
		WHERE team_id = $1 AND id = $2
		  AND state NOT IN ('succeeded', 'failed', 'cancelled', 'superseded')`, teamID, id, []byte(steps))
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 0 {
		return s.transitionRefused(ctx, op, teamID, id, "")
	}
	return nil
}
