package store

import "context"

// EnvironmentTelemetryGranted reports whether the environment is granted
// telemetry (migration 0010).
func (s *Store) EnvironmentTelemetryGranted(ctx context.Context, teamID, id string) (bool, error) {
	var granted bool
	err := s.db.QueryRow(ctx, `
		SELECT telemetry_granted FROM environments WHERE team_id = $1 AND id = $2`, teamID, id).Scan(&granted)
	return granted, wrap("get environment telemetry", err)
}

// SetEnvironmentTelemetry grants or revokes an environment's telemetry.
func (s *Store) SetEnvironmentTelemetry(ctx context.Context, teamID, id string, granted bool) error {
	return s.execOne(ctx, "set environment telemetry", `
		UPDATE environments SET telemetry_granted = $3, updated_at = now()
		WHERE team_id = $1 AND id = $2`, teamID, id, granted)
}
