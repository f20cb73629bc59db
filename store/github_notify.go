package store

import "context"

// TryGitHubNotifyLock takes, for the rest of the transaction, the lock that
// serializes the notifications of one pull request row (or one deployment):
// two jobs rendering the same comment at once could both create it. It
// reports false when another transaction holds it. Call it in WithTx.
func (s *Store) TryGitHubNotifyLock(ctx context.Context, teamID, key string) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended('github_notify:' || $1 || ':' || $2, 0))`,
		teamID, key).Scan(&ok)
	return ok, wrap("github notify lock", err)
}

// GitHubNotifies reports whether the application's deployments notify
// GitHub: it is connected to a repository of an installation that is bound
// to the team and neither suspended nor deleted.
func (s *Store) GitHubNotifies(ctx context.Context, teamID, applicationID string) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM github_repository_links l
			JOIN github_installations i ON i.installation_id = l.installation_id
			WHERE l.team_id = $1 AND l.application_id = $2 AND i.team_id = $1
				AND i.suspended_at IS NULL AND i.deleted_at IS NULL)`, teamID, applicationID).Scan(&ok)
	return ok, wrap("github notifies", err)
}
