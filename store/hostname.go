package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// HostnameReservation says which environment owns a hostname (or a
// "*.example.com" wildcard). A hostname has exactly one owner across all
// teams; a clash is a hostname_conflict.
type HostnameReservation struct {
	Hostname      string
	Wildcard      bool
	TeamID        string
	ApplicationID string
	EnvironmentID string
	CreatedAt     time.Time
}

// hostnameLockKey serializes reservations: the wildcard rule reads rows
// another transaction may be inserting, which a unique index cannot guard.
const hostnameLockKey = 0x736c_6970_0002

const hostnameColumns = `hostname, wildcard, team_id, application_id, environment_id, created_at`

func scanHostname(row pgx.Row) (HostnameReservation, error) {
	var h HostnameReservation
	err := row.Scan(&h.Hostname, &h.Wildcard, &h.TeamID, &h.ApplicationID, &h.EnvironmentID, &h.CreatedAt)
	return h, err
}

// NormalizeHostname lowercases a hostname and drops a trailing dot, the
// form reservations are stored in.
func NormalizeHostname(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// SetEnvironmentHostnames makes hostnames exactly the set the environment
// reserves: it reserves the new ones and releases the others, atomically.
// A hostname held by another environment (of any team), or an exact
// hostname below a wildcard another application holds (unless this
// environment held the name first), fails with a *ConflictError whose Code
// is hostname_conflict and Value the hostname, and changes nothing.
func (s *Store) SetEnvironmentHostnames(ctx context.Context, teamID, environmentID string, hostnames []string) error {
	const op = "set environment hostnames"
	hosts := make([]string, 0, len(hostnames))
	for _, h := range hostnames {
		hosts = append(hosts, NormalizeHostname(h))
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	return s.WithTx(ctx, func(tx *Store) error {
		var applicationID string
		err := tx.db.QueryRow(ctx, `
			SELECT application_id FROM environments WHERE team_id = $1 AND id = $2`,
			teamID, environmentID).Scan(&applicationID)
		if err != nil {
			return wrap(op, err)
		}
		if _, err := tx.db.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(hostnameLockKey)); err != nil {
			return wrap(op, err)
		}
		// Owned by another environment, whichever team it belongs to. The
		// error names the hostname only: nothing of the other team leaks.
		var taken string
		err = tx.db.QueryRow(ctx, `
			SELECT hostname FROM hostname_reservations
			WHERE hostname = ANY($1) AND environment_id <> $2
			ORDER BY hostname LIMIT 1`, hosts, environmentID).Scan(&taken)
		if err == nil {
			return fmt.Errorf("%s: %w", op, hostnameConflict(taken))
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return wrap(op, err)
		}
		// An exact name below another application's wildcard, unless this
		// environment routed it first.
		err = tx.db.QueryRow(ctx, `
			SELECT h.name FROM unnest($1::text[]) AS h(name)
			JOIN hostname_reservations w
			  ON w.wildcard AND w.hostname = '*.' || substr(h.name, strpos(h.name, '.') + 1)
			WHERE h.name NOT LIKE '*.%' AND strpos(h.name, '.') > 0
			  AND w.application_id <> $2
			  AND NOT EXISTS (SELECT 1 FROM hostname_reservations o
			                  WHERE o.hostname = h.name AND o.environment_id = $3)
			ORDER BY h.name LIMIT 1`, hosts, applicationID, environmentID).Scan(&taken)
		if err == nil {
			return fmt.Errorf("%s: %w", op, hostnameConflict(taken))
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return wrap(op, err)
		}
		if _, err := tx.db.Exec(ctx, `
			DELETE FROM hostname_reservations
			WHERE team_id = $1 AND environment_id = $2 AND hostname <> ALL($3)`,
			teamID, environmentID, hosts); err != nil {
			return wrap(op, err)
		}
		_, err = tx.db.Exec(ctx, `
			INSERT INTO hostname_reservations (hostname, team_id, application_id, environment_id)
			SELECT h, $1, $2, $3 FROM unnest($4::text[]) AS h
			ON CONFLICT (hostname) DO NOTHING`, teamID, applicationID, environmentID, hosts)
		return wrap(op, err)
	})
}

func hostnameConflict(hostname string) *ConflictError {
	return &ConflictError{Constraint: "hostname_reservations_pkey", Field: "hostname", Code: "hostname_conflict", Value: hostname}
}

// ListHostnames returns the environment's reserved hostnames, sorted.
func (s *Store) ListHostnames(ctx context.Context, teamID, environmentID string) ([]HostnameReservation, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+hostnameColumns+` FROM hostname_reservations
		WHERE team_id = $1 AND environment_id = $2
		ORDER BY hostname`, teamID, environmentID)
	if err != nil {
		return nil, wrap("list hostnames", err)
	}
	hs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (HostnameReservation, error) { return scanHostname(r) })
	return hs, wrap("list hostnames", err)
}

// ReleaseHostnames drops every reservation of the environment and returns
// how many there were.
func (s *Store) ReleaseHostnames(ctx context.Context, teamID, environmentID string) (int64, error) {
	tag, err := s.db.Exec(ctx, `
		DELETE FROM hostname_reservations WHERE team_id = $1 AND environment_id = $2`, teamID, environmentID)
	return tag.RowsAffected(), wrap("release hostnames", err)
}

// HostnameOwner is the environment of a team that holds a hostname.
type HostnameOwner struct {
	ApplicationID   string
	ApplicationName string
	EnvironmentID   string
	EnvironmentName string
	// Hostname is the reservation that covers the name: the name itself
	// or the wildcard just above it.
	Hostname string
}

// TeamHostnameOwner returns the environment of teamID that reserves
// hostname or the wildcard just above it; ErrNotFound when none of the
// team's does (another team's, or nobody's: never said which).
func (s *Store) TeamHostnameOwner(ctx context.Context, teamID, hostname string) (HostnameOwner, error) {
	hostname = NormalizeHostname(hostname)
	wildcard := ""
	if _, parent, ok := strings.Cut(hostname, "."); ok {
		wildcard = "*." + parent
	}
	var o HostnameOwner
	err := s.db.QueryRow(ctx, `
		SELECT h.application_id, a.name, h.environment_id, e.name, h.hostname
		FROM hostname_reservations h
		JOIN applications a ON a.team_id = h.team_id AND a.id = h.application_id
		JOIN environments e ON e.team_id = h.team_id AND e.id = h.environment_id
		WHERE h.team_id = $1 AND h.hostname IN ($2, $3)
		ORDER BY h.wildcard, h.hostname LIMIT 1`, teamID, hostname, wildcard).
		Scan(&o.ApplicationID, &o.ApplicationName, &o.EnvironmentID, &o.EnvironmentName, &o.Hostname)
	return o, wrap("team hostname owner", err)
}
