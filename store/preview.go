package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ListPreviews returns the application's previews ordered by branch and
// slot, including ones being deleted (DeletingAt set).
func (s *Store) ListPreviews(ctx context.Context, teamID, applicationID string) ([]Environment, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+environmentColumns+` FROM environments
		WHERE team_id = $1 AND application_id = $2 AND kind = 'preview'
		ORDER BY branch, slot`, teamID, applicationID)
	if err != nil {
		return nil, wrap("list previews", err)
	}
	es, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Environment, error) { return scanEnvironment(r) })
	return es, wrap("list previews", err)
}

// GetPreviewBySlug returns the application's preview with that slug.
func (s *Store) GetPreviewBySlug(ctx context.Context, teamID, applicationID, slug string) (Environment, error) {
	e, err := scanEnvironment(s.db.QueryRow(ctx, `
		SELECT `+environmentColumns+` FROM environments
		WHERE team_id = $1 AND application_id = $2 AND kind = 'preview' AND slug = $3`,
		teamID, applicationID, slug))
	return e, wrap("get preview by slug", err)
}

// PreviewCounts is how many previews exist: of one application, and
// across the whole daemon (every team), for the daemon's [previews] limits.
type PreviewCounts struct {
	Application int
	Total       int
}

// LockPreviewCounts serializes preview creation daemon-wide for the rest of
// the transaction and returns the counts the limits are checked against,
// so two creations cannot both take the last place. The total spans every
// team because max_total bounds the daemon; only a number leaves the query.
func (s *Store) LockPreviewCounts(ctx context.Context, teamID, applicationID string) (PreviewCounts, error) {
	if s.tx == nil {
		return PreviewCounts{}, errNotInTx("lock preview counts")
	}
	var c PreviewCounts
	if _, err := s.db.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('slipway.preview_create'))`); err != nil {
		return c, wrap("lock preview counts", err)
	}
	err := s.db.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE team_id = $1 AND application_id = $2), count(*)
		FROM environments WHERE kind = 'preview'`, teamID, applicationID).Scan(&c.Application, &c.Total)
	return c, wrap("count previews", err)
}

// MarkPreviewDeleting records that the preview's deletion started; the
// row stays until the worker removed everything (DeleteEnvironment). A
// preview already being deleted keeps its first time.
func (s *Store) MarkPreviewDeleting(ctx context.Context, teamID, environmentID string, at time.Time) (Environment, error) {
	e, err := scanEnvironment(s.db.QueryRow(ctx, `
		UPDATE environments SET deleting_at = coalesce(deleting_at, $3), updated_at = now()
		WHERE team_id = $1 AND id = $2 AND kind = 'preview'
		RETURNING `+environmentColumns, teamID, environmentID, at))
	return e, wrap("mark preview deleting", err)
}

// RecordPreviewVolumes adds volume names to the preview's inventory;
// names already there are kept as they are.
func (s *Store) RecordPreviewVolumes(ctx context.Context, teamID, environmentID string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	_, err := s.db.Exec(ctx, `
		INSERT INTO preview_volumes (team_id, environment_id, name)
		SELECT e.team_id, e.id, n FROM environments e, unnest($3::text[]) AS n
		WHERE e.team_id = $1 AND e.id = $2 AND e.kind = 'preview'
		ON CONFLICT (environment_id, name) DO NOTHING`, teamID, environmentID, names)
	return wrap("record preview volumes", err)
}

// ListPreviewVolumes returns the preview's volume inventory by name.
func (s *Store) ListPreviewVolumes(ctx context.Context, teamID, environmentID string) ([]string, error) {
	rows, err := s.db.Query(ctx, `
		SELECT name FROM preview_volumes WHERE team_id = $1 AND environment_id = $2 ORDER BY name`,
		teamID, environmentID)
	if err != nil {
		return nil, wrap("list preview volumes", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return names, wrap("list preview volumes", err)
}

// LatestDeployment returns the environment's newest deployment, whatever
// its state.
func (s *Store) LatestDeployment(ctx context.Context, teamID, environmentID string) (Deployment, error) {
	d, err := scanDeployment(s.db.QueryRow(ctx, `
		SELECT `+deploymentColumns+` FROM deployments
		WHERE team_id = $1 AND environment_id = $2
		ORDER BY created_at DESC, id DESC
		LIMIT 1`, teamID, environmentID))
	return d, wrap("latest deployment", err)
}

// SyncRequestedCommit returns the branch head recorded for the environment
// as already deployed (MarkSyncRequested); "" stands for a branch that did
// not exist then. ErrNotFound when nothing was recorded.
func (s *Store) SyncRequestedCommit(ctx context.Context, teamID, environmentID string) (string, error) {
	var commit string
	err := s.db.QueryRow(ctx, `
		SELECT requested_commit FROM environment_sync WHERE team_id = $1 AND environment_id = $2`,
		teamID, environmentID).Scan(&commit)
	return commit, wrap("sync requested commit", err)
}
