package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// Event is one entry of a team's append-only audit log.
type Event struct {
	ID         int64
	TeamID     string
	Actor      string // "user:<id>", "token:<id>", "github", "system"
	Verb       string // snake_case, dotted allowed: "application.create"
	ObjectType string // "application", "deployment", ...
	ObjectID   string
	Details    json.RawMessage // a JSON object
	CreatedAt  time.Time
}

// EventParams are the fields of a new event.
type EventParams struct {
	Actor      string
	Verb       string
	ObjectType string
	ObjectID   string
	// Details is marshalled to a JSON object; nil stores {}.
	Details any
}

// EventFilter narrows ListEvents. Zero fields do not filter.
type EventFilter struct {
	ObjectType string
	ObjectID   string
	// ApplicationID keeps the events naming the application, one of its
	// environments or one of its deployments.
	ApplicationID string
	// Actor keeps one actor's events ("user:<id>", "token:<id>", "system").
	Actor string
	// Verb keeps the events of one verb ("deployment.request"...).
	Verb string
	// Summary leaves out the worker's progress events of deployments
	// (capturing, preparing, running jobs, rolling out, retrying) and the
	// outcome of a deployment whose request or branch sync has its own
	// event, so each deployment is one entry (its request, read with the
	// deployment's state).
	Summary bool
	// BeforeID pages backwards: only events with a smaller id.
	BeforeID int64
	// Limit defaults to 50 and is capped at 500.
	Limit int
}

const eventColumns = `id, team_id, actor, verb, object_type, object_id, details, created_at`

func scanEvent(row pgx.Row) (Event, error) {
	var e Event
	err := row.Scan(&e.ID, &e.TeamID, &e.Actor, &e.Verb, &e.ObjectType, &e.ObjectID, &e.Details, &e.CreatedAt)
	return e, err
}

// RecordEvent appends an event to the team's audit log.
func (s *Store) RecordEvent(ctx context.Context, teamID string, p EventParams) (Event, error) {
	details := []byte("{}")
	if p.Details != nil {
		b, err := json.Marshal(p.Details)
		if err != nil {
			return Event{}, wrap("record event: details", err)
		}
		details = b
	}
	e, err := scanEvent(s.db.QueryRow(ctx, `
		INSERT INTO events (team_id, actor, verb, object_type, object_id, details)
		VALUES ($1, $2, $3, $4, $5, $6)
		RETURNING `+eventColumns, teamID, p.Actor, p.Verb, p.ObjectType, p.ObjectID, details))
	return e, wrap("record event", err)
}

// ListEvents returns the team's events, newest first.
func (s *Store) ListEvents(ctx context.Context, teamID string, f EventFilter) ([]Event, error) {
	return s.listEvents(ctx, teamID, f, eventLimit(f.Limit))
}

// EventPage is one page of a team's audit log, newest first.
type EventPage struct {
	Events []Event
	// NextBefore is the BeforeID of the next (older) page; 0 when no older
	// event matches the filter.
	NextBefore int64
}

// ListEventPage returns one page of the team's events, newest first, and
// the keyset cursor of the next page. Ids only grow, so a page stays
// stable while newer events arrive.
func (s *Store) ListEventPage(ctx context.Context, teamID string, f EventFilter) (EventPage, error) {
	limit := eventLimit(f.Limit)
	es, err := s.listEvents(ctx, teamID, f, limit+1)
	if err != nil {
		return EventPage{}, err
	}
	p := EventPage{Events: es}
	if len(es) > limit {
		p.Events = es[:limit]
		p.NextBefore = es[limit-1].ID
	}
	return p, nil
}

// eventLimit is f.Limit defaulted to 50 and capped at 500.
func eventLimit(limit int) int {
	if limit <= 0 {
		return 50
	}
	return min(limit, 500)
}

func (s *Store) listEvents(ctx context.Context, teamID string, f EventFilter, limit int) ([]Event, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+eventColumns+` FROM events
		WHERE team_id = $1
		  AND ($2 = '' OR object_type = $2)
		  AND ($3 = '' OR object_id = $3)
		  AND ($4 = 0 OR id < $4)
		  AND ($6 = '' OR actor = $6)
		  AND ($7 = '' OR `+namesApplication("$1", "$7")+`)
		  AND ($8 = '' OR verb = $8)
		  AND (NOT $9 OR NOT `+deploymentDetail+`)
		ORDER BY id DESC
		LIMIT $5`, teamID, f.ObjectType, f.ObjectID, f.BeforeID, limit, f.Actor, f.ApplicationID, f.Verb, f.Summary)
	if err != nil {
		return nil, wrap("list events", err)
	}
	es, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) { return scanEvent(r) })
	return es, wrap("list events", err)
}

// deploymentDetail is the condition that an event is a deployment's
// progress, or an outcome that its request (or, for a branch sync, the
// environment's branch_synced event) already stands for; $1 is the team.
const deploymentDetail = `(object_type = 'deployment' AND (
		verb IN ('deployment.capturing', 'deployment.preparing', 'deployment.running_jobs', 'deployment.rolling_out', 'deployment.retrying')
		OR verb IN ('deployment.succeeded', 'deployment.failed') AND (
			EXISTS (SELECT 1 FROM events r WHERE r.team_id = $1 AND r.object_type = 'deployment' AND r.object_id = events.object_id
				AND r.verb IN ('deployment.request', 'preview.local'))
			OR EXISTS (SELECT 1 FROM deployments d WHERE d.team_id = $1 AND d.id = events.object_id AND d.actor LIKE 'sync:%'))))`

// namesApplication is the condition that an event names the application
// whose id is parameter app, one of its environments or one of its
// deployments, or says in its details that it concerns it (a stored
// secret's events, the worker's), in the team whose id is parameter team.
func namesApplication(team, app string) string {
	return `(object_id = ` + app + `
		OR details->>'application_id' = ` + app + `
		OR object_id IN (SELECT id FROM environments WHERE team_id = ` + team + ` AND application_id = ` + app + `)
		OR object_id IN (SELECT id FROM deployments WHERE team_id = ` + team + ` AND application_id = ` + app + `))`
}

// ListEventVerbs returns the verbs of the events naming the application,
// its environments or its deployments, sorted.
func (s *Store) ListEventVerbs(ctx context.Context, teamID, applicationID string) ([]string, error) {
	var verbs []string
	err := s.db.QueryRow(ctx, `
		SELECT coalesce(array_agg(DISTINCT verb ORDER BY verb), '{}') FROM events
		WHERE team_id = $1 AND `+namesApplication("$1", "$2"),
		teamID, applicationID).Scan(&verbs)
	return verbs, wrap("list event verbs", err)
}

// EventFacets are the values the team's audit log can be filtered by.
type EventFacets struct {
	Kinds  []string // object types, sorted
	Actors []string // actors, sorted
}

// ListEventFacets returns the object types and actors of the team's events.
func (s *Store) ListEventFacets(ctx context.Context, teamID string) (EventFacets, error) {
	var f EventFacets
	err := s.db.QueryRow(ctx, `
		SELECT
		  coalesce((SELECT array_agg(DISTINCT object_type ORDER BY object_type) FROM events WHERE team_id = $1), '{}'),
		  coalesce((SELECT array_agg(DISTINCT actor ORDER BY actor) FROM events WHERE team_id = $1), '{}')`,
		teamID).Scan(&f.Kinds, &f.Actors)
	return f, wrap("list event facets", err)
}

// PruneEvents deletes events of every team created before cutoff and
// returns how many; it is the retention job's, not a tenant's, operation.
func (s *Store) PruneEvents(ctx context.Context, cutoff time.Time) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM events WHERE created_at < $1`, cutoff)
	return tag.RowsAffected(), wrap("prune events", err)
}
