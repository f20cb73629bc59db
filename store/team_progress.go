package store

import "context"

// TeamProgress is how far a team got with its first steps, for the
// dashboard's getting-started checklist: each is read from real state.
type TeamProgress struct {
	Applications bool // it has an application
	Deployed     bool // a deployment of it succeeded
	Routed       bool // a deployment serves a route
	GitHub       bool // a GitHub installation is bound to it
	Teammates    bool // it has more than one member
	Tokens       bool // it has an API token that is not revoked
}

// Done reports whether every step is done.
func (p TeamProgress) Done() bool {
	return p.Applications && p.Deployed && p.Routed && p.GitHub && p.Teammates && p.Tokens
}

// GetTeamProgress reads the team's first steps in one query.
func (s *Store) GetTeamProgress(ctx context.Context, teamID string) (TeamProgress, error) {
	var p TeamProgress
	err := s.db.QueryRow(ctx, `
		SELECT
		  EXISTS (SELECT 1 FROM applications WHERE team_id = $1 AND deleted_at IS NULL),
		  EXISTS (SELECT 1 FROM deployments WHERE team_id = $1 AND state = 'succeeded'),
		  EXISTS (SELECT 1 FROM deployed_routes WHERE team_id = $1),
		  EXISTS (SELECT 1 FROM github_installations WHERE team_id = $1),
		  (SELECT count(*) FROM memberships WHERE team_id = $1) > 1,
		  EXISTS (SELECT 1 FROM api_tokens WHERE team_id = $1 AND revoked_at IS NULL)`, teamID).
		Scan(&p.Applications, &p.Deployed, &p.Routed, &p.GitHub, &p.Teammates, &p.Tokens)
	return p, wrap("get team progress", err)
}
