package store

import "context"

// RenameApplication changes an application's name, keeping its id and so
// everything keyed by it; a name the team already uses fails with a
// *ConflictError (application_name_taken).
func (s *Store) RenameApplication(ctx context.Context, teamID, id, name string) (Application, error) {
	a, err := scanApplication(s.db.QueryRow(ctx, `
		UPDATE applications SET name = $3, updated_at = now()
		WHERE team_id = $1 AND id = $2 AND deleted_at IS NULL
		RETURNING `+applicationColumns, teamID, id, name))
	return a, wrap("rename application", err)
}
