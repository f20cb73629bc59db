package store

import "context"

// RenameEnvironment changes an environment's name and with it its slug
// (an environment's slug is its name), keeping its id and so everything
// keyed by it; a name the application already uses fails with a
// *ConflictError (environment_name_taken).
func (s *Store) RenameEnvironment(ctx context.Context, teamID, id, name string) (Environment, error) {
	e, err := scanEnvironment(s.db.QueryRow(ctx, `
		UPDATE environments SET name = $3, slug = $3, updated_at = now()
		WHERE team_id = $1 AND id = $2 AND kind = 'environment'
		RETURNING `+environmentColumns, teamID, id, name))
	return e, wrap("rename environment", err)
}

// LastDeploymentFetch returns what the environment's most recent
// repository-reading deployment fetched, or ErrNotFound when none did.
func (s *Store) LastDeploymentFetch(ctx context.Context, teamID, environmentID string) (DeploymentFetch, error) {
	var f DeploymentFetch
	err := s.db.QueryRow(ctx, `
		SELECT deployment_id, environment_id, repository_url, branch, commit, manifest_path, manifest, created_at
		FROM deployment_fetches WHERE team_id = $1 AND environment_id = $2
		ORDER BY created_at DESC LIMIT 1`, teamID, environmentID).Scan(
		&f.DeploymentID, &f.EnvironmentID, &f.RepositoryURL, &f.Branch, &f.Commit, &f.ManifestPath, &f.Manifest, &f.CreatedAt)
	return f, wrap("last deployment fetch", err)
}
