package store

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// RouteCertificate is the certificate state of a routed hostname as the
// gateway last reported it: State is none, pending, issued, failed,
// operator or internal (see ingress.CertificateState).
type RouteCertificate struct {
	Hostname  string
	State     string
	ExpiresAt *time.Time
	LastError string
	// UpdatedAt is when the state last changed; ReportedAt when the
	// gateway last confirmed it.
	UpdatedAt  time.Time
	ReportedAt time.Time
}

// maxCertificateError bounds a stored ACME error message.
const maxCertificateError = 2000

// ReportRouteCertificates stores the gateway's certificate report: each
// hostname that is routed now gets its state, under the team whose route it
// is; hostnames no longer routed are ignored, and states of hostnames that
// left their team's routes are dropped. It spans teams (maintenance: only
// serve's gateway feed calls it, with what the gateway sent).
func (s *Store) ReportRouteCertificates(ctx context.Context, certs []RouteCertificate) error {
	const op = "report route certificates"
	byHost := make(map[string]int, len(certs))
	var hosts, states, errs []string
	var expires []*time.Time
	for _, c := range certs {
		h := NormalizeHostname(c.Hostname)
		msg := c.LastError
		if len(msg) > maxCertificateError {
			msg = strings.ToValidUTF8(msg[:maxCertificateError], "")
		}
		if i, dup := byHost[h]; dup {
			states[i], expires[i], errs[i] = c.State, c.ExpiresAt, msg
			continue
		}
		byHost[h] = len(hosts)
		hosts, states, expires, errs = append(hosts, h), append(states, c.State), append(expires, c.ExpiresAt), append(errs, msg)
	}
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `
			INSERT INTO route_certificates (hostname, team_id, state, expires_at, last_error)
			SELECT r.hostname, d.team_id, r.state, r.expires_at, r.last_error
			FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) AS r(hostname, state, expires_at, last_error)
			JOIN deployed_routes d ON d.hostname = r.hostname
			ON CONFLICT (hostname) DO UPDATE SET
				team_id = EXCLUDED.team_id, state = EXCLUDED.state, expires_at = EXCLUDED.expires_at,
				last_error = EXCLUDED.last_error, reported_at = now(),
				updated_at = CASE
					WHEN (route_certificates.team_id, route_certificates.state, route_certificates.expires_at, route_certificates.last_error)
						IS DISTINCT FROM (EXCLUDED.team_id, EXCLUDED.state, EXCLUDED.expires_at, EXCLUDED.last_error)
					THEN now() ELSE route_certificates.updated_at END`,
			hosts, states, expires, errs); err != nil {
			return wrap(op, err)
		}
		_, err := tx.db.Exec(ctx, `
			DELETE FROM route_certificates c
			WHERE NOT EXISTS (SELECT 1 FROM deployed_routes d WHERE d.hostname = c.hostname AND d.team_id = c.team_id)`)
		return wrap(op, err)
	})
}

// ListEnvironmentCertificates returns the reported certificate state of
// the environment's routes by hostname; a route the gateway has not
// reported yet is absent.
func (s *Store) ListEnvironmentCertificates(ctx context.Context, teamID, environmentID string) (map[string]RouteCertificate, error) {
	const op = "list environment certificates"
	rows, err := s.db.Query(ctx, `
		SELECT c.hostname, c.state, c.expires_at, c.last_error, c.updated_at, c.reported_at
		FROM route_certificates c
		JOIN deployed_routes d ON d.hostname = c.hostname AND d.team_id = c.team_id
		WHERE c.team_id = $1 AND d.environment_id = $2`, teamID, environmentID)
	if err != nil {
		return nil, wrap(op, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RouteCertificate, error) {
		var c RouteCertificate
		err := r.Scan(&c.Hostname, &c.State, &c.ExpiresAt, &c.LastError, &c.UpdatedAt, &c.ReportedAt)
		return c, err
	})
	if err != nil {
		return nil, wrap(op, err)
	}
	out := make(map[string]RouteCertificate, len(list))
	for _, c := range list {
		out[c.Hostname] = c
	}
	return out, nil
}
