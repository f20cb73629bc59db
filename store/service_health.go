package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServiceHealth is a service that has not run as its deployment asks
// since UnhealthySince.
type ServiceHealth struct {
	TeamID         string
	EnvironmentID  string
	Service        string
	UnhealthySince time.Time
	Reason         string
}

// ListServiceHealth returns every unhealthy service, across teams (the
// sampler's view).
func (s *Store) ListServiceHealth(ctx context.Context) ([]ServiceHealth, error) {
	const op = "list service health"
	rows, err := s.db.Query(ctx, `SELECT team_id, environment_id, service, unhealthy_since, reason FROM service_health`)
	if err != nil {
		return nil, wrap(op, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ServiceHealth, error) {
		var h ServiceHealth
		err := r.Scan(&h.TeamID, &h.EnvironmentID, &h.Service, &h.UnhealthySince, &h.Reason)
		return h, err
	})
	return list, wrap(op, err)
}

// MarkServiceUnhealthy records that the team's service is unhealthy,
// keeping the time it first was, and returns the row. An environment that
// is not the team's is ErrNotFound.
func (s *Store) MarkServiceUnhealthy(ctx context.Context, teamID, environmentID, service string, at time.Time, reason string) (ServiceHealth, error) {
	h := ServiceHealth{TeamID: teamID, EnvironmentID: environmentID, Service: service}
	if len(reason) > 2000 {
		reason = reason[:2000]
	}
	err := s.db.QueryRow(ctx, `
		INSERT INTO service_health (team_id, environment_id, service, unhealthy_since, reason)
		SELECT e.team_id, e.id, $3, $4, $5 FROM environments e WHERE e.team_id = $1 AND e.id = $2
		ON CONFLICT (environment_id, service) DO UPDATE SET reason = EXCLUDED.reason
		RETURNING unhealthy_since, reason`, teamID, environmentID, service, at, reason).Scan(&h.UnhealthySince, &h.Reason)
	return h, wrap("mark service unhealthy", err)
}

// ClearServiceHealth removes the team's service from the unhealthy ones.
func (s *Store) ClearServiceHealth(ctx context.Context, teamID, environmentID, service string) error {
	_, err := s.db.Exec(ctx, `DELETE FROM service_health WHERE team_id = $1 AND environment_id = $2 AND service = $3`,
		teamID, environmentID, service)
	return wrap("clear service health", err)
}

// RouteOwner is the team and environment a routed hostname belongs to.
type RouteOwner struct {
	TeamID        string
	EnvironmentID string
}

// RouteOwners returns the owner of each routed hostname, across teams
// (the sampler maps the gateway's per-host series with it).
func (s *Store) RouteOwners(ctx context.Context) (map[string]RouteOwner, error) {
	const op = "route owners"
	rows, err := s.db.Query(ctx, `SELECT hostname, team_id, environment_id FROM deployed_routes`)
	if err != nil {
		return nil, wrap(op, err)
	}
	out := map[string]RouteOwner{}
	var host string
	var o RouteOwner
	_, err = pgx.ForEachRow(rows, []any{&host, &o.TeamID, &o.EnvironmentID}, func() error {
		out[host] = o
		return nil
	})
	return out, wrap(op, err)
}

// CertificateAlert is a routed hostname whose certificate failed or ends
// soon.
type CertificateAlert struct {
	RouteOwner
	Hostname  string
	State     string
	ExpiresAt *time.Time
	LastError string
	UpdatedAt time.Time
}

// ListCertificateAlerts returns, across teams, the routed hostnames whose
// certificate failed or expires before expiringBefore.
func (s *Store) ListCertificateAlerts(ctx context.Context, expiringBefore time.Time) ([]CertificateAlert, error) {
	const op = "list certificate alerts"
	rows, err := s.db.Query(ctx, `
		SELECT d.team_id, d.environment_id, c.hostname, c.state, c.expires_at, c.last_error, c.updated_at
		FROM route_certificates c JOIN deployed_routes d ON d.hostname = c.hostname AND d.team_id = c.team_id
		WHERE c.state = 'failed' OR (c.state = 'issued' AND c.expires_at < $1)`, expiringBefore)
	if err != nil {
		return nil, wrap(op, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (CertificateAlert, error) {
		var a CertificateAlert
		err := r.Scan(&a.TeamID, &a.EnvironmentID, &a.Hostname, &a.State, &a.ExpiresAt, &a.LastError, &a.UpdatedAt)
		return a, err
	})
	return list, wrap(op, err)
}
