package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ManifestRevision is one saved version of an application's manifest.
// Revisions are numbered 1, 2, 3... per application and never change.
type ManifestRevision struct {
	ID            string
	TeamID        string
	ApplicationID string
	Revision      int64
	Manifest      json.RawMessage // normalized manifest JSON
	Source        string          // the document as submitted
	SourceFormat  string          // "toml" or "json"
	Author        string          // actor, as in Event.Actor
	CreatedAt     time.Time
}

// RevisionParams are the fields of a new revision.
type RevisionParams struct {
	Manifest     json.RawMessage
	Source       string
	SourceFormat string // "toml" (default) or "json"
	Author       string
	// BaseRevision, when not nil, is the revision the author edited: saving
	// fails with a *ConflictError (revision_conflict) if another save
	// happened since, instead of silently overwriting it.
	BaseRevision *int64
}

const revisionColumns = `id, team_id, application_id, revision, manifest, source, source_format, author, created_at`

func scanRevision(row pgx.Row) (ManifestRevision, error) {
	var r ManifestRevision
	err := row.Scan(&r.ID, &r.TeamID, &r.ApplicationID, &r.Revision, &r.Manifest, &r.Source, &r.SourceFormat,
		&r.Author, &r.CreatedAt)
	return r, err
}

// CreateManifestRevision saves the next revision of the application's
// manifest and makes it current. The application row is locked, so
// concurrent saves get consecutive numbers.
func (s *Store) CreateManifestRevision(ctx context.Context, teamID, applicationID string, p RevisionParams) (ManifestRevision, error) {
	const op = "create manifest revision"
	format := p.SourceFormat
	if format == "" {
		format = "toml"
	}
	var rev ManifestRevision
	err := s.WithTx(ctx, func(tx *Store) error {
		var current int64
		err := tx.db.QueryRow(ctx, `
			SELECT current_revision FROM applications
			WHERE team_id = $1 AND id = $2 AND deleted_at IS NULL
			FOR UPDATE`, teamID, applicationID).Scan(&current)
		if err != nil {
			return wrap(op, err)
		}
		if p.BaseRevision != nil && *p.BaseRevision != current {
			return fmt.Errorf("%s: %w", op, &ConflictError{
				Constraint: "applications_current_revision", Field: "revision", Code: "revision_conflict"})
		}
		rev, err = scanRevision(tx.db.QueryRow(ctx, `
			INSERT INTO manifest_revisions (id, team_id, application_id, revision, manifest, source, source_format, author)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			RETURNING `+revisionColumns,
			newID("rev"), teamID, applicationID, current+1, p.Manifest, p.Source, format, p.Author))
		if err != nil {
			return wrap(op, err)
		}
		return tx.execOne(ctx, op, `
			UPDATE applications SET current_revision = $3, updated_at = now()
			WHERE team_id = $1 AND id = $2`, teamID, applicationID, rev.Revision)
	})
	if err != nil {
		return ManifestRevision{}, err
	}
	return rev, nil
}

// GetManifestRevision returns one revision of the application's manifest.
func (s *Store) GetManifestRevision(ctx context.Context, teamID, applicationID string, revision int64) (ManifestRevision, error) {
	r, err := scanRevision(s.db.QueryRow(ctx, `
		SELECT `+revisionColumns+` FROM manifest_revisions
		WHERE team_id = $1 AND application_id = $2 AND revision = $3`, teamID, applicationID, revision))
	return r, wrap("get manifest revision", err)
}

// GetCurrentManifestRevision returns the application's saved manifest;
// ErrNotFound when none was saved yet.
func (s *Store) GetCurrentManifestRevision(ctx context.Context, teamID, applicationID string) (ManifestRevision, error) {
	r, err := scanRevision(s.db.QueryRow(ctx, `
		SELECT `+prefixColumns("r", revisionColumns)+`
		FROM manifest_revisions r
		JOIN applications a ON a.team_id = r.team_id AND a.id = r.application_id AND a.current_revision = r.revision
		WHERE r.team_id = $1 AND r.application_id = $2 AND a.deleted_at IS NULL`, teamID, applicationID))
	return r, wrap("get current manifest revision", err)
}

// ListManifestRevisions returns the application's revisions, newest first,
// without their manifest and source (Manifest and Source are empty): a
// history list needs neither, and they can be large.
func (s *Store) ListManifestRevisions(ctx context.Context, teamID, applicationID string) ([]ManifestRevision, error) {
	rows, err := s.db.Query(ctx, `
		SELECT id, team_id, application_id, revision, NULL::jsonb, '', source_format, author, created_at
		FROM manifest_revisions
		WHERE team_id = $1 AND application_id = $2
		ORDER BY revision DESC`, teamID, applicationID)
	if err != nil {
		return nil, wrap("list manifest revisions", err)
	}
	rs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ManifestRevision, error) { return scanRevision(r) })
	return rs, wrap("list manifest revisions", err)
}
