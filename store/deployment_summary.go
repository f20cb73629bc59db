package store

import "context"

// DeploymentSummary is what a list naming deployments (the audit log)
// shows of each: where it ran, which revision, and how it went.
type DeploymentSummary struct {
	ID            string
	ApplicationID string
	EnvironmentID string
	Revision      int64
	State         DeploymentState
	Origin        Origin
	ErrorCode     string
}

// DeploymentSummaries returns the team's deployments among ids, by id;
// ids of other teams' deployments are left out.
func (s *Store) DeploymentSummaries(ctx context.Context, teamID string, ids []string) (map[string]DeploymentSummary, error) {
	out := map[string]DeploymentSummary{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.Query(ctx, `
		SELECT id, application_id, environment_id, revision, state, origin, error_code
		FROM deployments WHERE team_id = $1 AND id = ANY($2)`, teamID, ids)
	if err != nil {
		return nil, wrap("deployment summaries", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d DeploymentSummary
		if err := rows.Scan(&d.ID, &d.ApplicationID, &d.EnvironmentID, &d.Revision, &d.State, &d.Origin, &d.ErrorCode); err != nil {
			return nil, wrap("deployment summaries", err)
		}
		out[d.ID] = d
	}
	return out, wrap("deployment summaries", rows.Err())
}
