package store

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeployedRoute is a route an environment serves now: the hostname, its
// effective visibility, and either a backend (the Swarm service's DNS name,
// port and ingress network) or a redirect.
type DeployedRoute struct {
	TeamID         string
	ApplicationID  string
	EnvironmentID  string
	DeploymentID   string
	Hostname       string
	Wildcard       bool
	Visibility     string // "public" or "private"
	Service        string // the manifest's service name
	BackendService string // its Swarm DNS name
	BackendPort    int
	BackendNetwork string
	RedirectTo     string
	RedirectStatus int
	PreservePath   bool
	UpdatedAt      time.Time
}

const routeColumns = `team_id, application_id, environment_id, deployment_id, hostname, wildcard,
	visibility, service, backend_service, backend_port, backend_network, redirect_to, redirect_status,
	preserve_path, updated_at`

func scanRoute(row pgx.Row) (DeployedRoute, error) {
	var r DeployedRoute
	err := row.Scan(&r.TeamID, &r.ApplicationID, &r.EnvironmentID, &r.DeploymentID, &r.Hostname, &r.Wildcard,
		&r.Visibility, &r.Service, &r.BackendService, &r.BackendPort, &r.BackendNetwork, &r.RedirectTo, &r.RedirectStatus,
		&r.PreservePath, &r.UpdatedAt)
	return r, err
}

func collectRoutes(op string, rows pgx.Rows, err error) ([]DeployedRoute, error) {
	if err != nil {
		return nil, wrap(op, err)
	}
	rs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeployedRoute, error) { return scanRoute(r) })
	return rs, wrap(op, err)
}

// SetEnvironmentRoutes makes routes exactly the routes the environment
// serves, atomically; TeamID, ApplicationID and EnvironmentID of routes are
// taken from the arguments and the environment. Every change bumps the
// route table version in the same transaction (a trigger does it, so a
// cascade from a deleted environment bumps it too). A hostname another
// environment serves fails with a *ConflictError and changes nothing.
func (s *Store) SetEnvironmentRoutes(ctx context.Context, teamID, environmentID string, routes []DeployedRoute) error {
	const op = "set environment routes"
	return s.WithTx(ctx, func(tx *Store) error {
		var applicationID string
		err := tx.db.QueryRow(ctx, `
			SELECT application_id FROM environments WHERE team_id = $1 AND id = $2`,
			teamID, environmentID).Scan(&applicationID)
		if err != nil {
			return wrap(op, err)
		}
		hosts := make([]string, 0, len(routes))
		for i := range routes {
			routes[i].Hostname = NormalizeHostname(routes[i].Hostname)
			hosts = append(hosts, routes[i].Hostname)
		}
		slices.Sort(hosts)
		if _, err := tx.db.Exec(ctx, `
			DELETE FROM deployed_routes
			WHERE team_id = $1 AND environment_id = $2 AND hostname <> ALL($3)`,
			teamID, environmentID, hosts); err != nil {
			return wrap(op, err)
		}
		for _, r := range routes {
			// Only a row that really changed is written, so a redeploy with
			// the same routes leaves the table (mostly) untouched.
			if _, err := tx.db.Exec(ctx, `
				INSERT INTO deployed_routes (team_id, application_id, environment_id, deployment_id, hostname,
					visibility, service, backend_service, backend_port, backend_network, redirect_to, redirect_status, preserve_path)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
				ON CONFLICT (hostname) DO UPDATE SET
					deployment_id = EXCLUDED.deployment_id, visibility = EXCLUDED.visibility, service = EXCLUDED.service,
					backend_service = EXCLUDED.backend_service, backend_port = EXCLUDED.backend_port,
					backend_network = EXCLUDED.backend_network, redirect_to = EXCLUDED.redirect_to,
					redirect_status = EXCLUDED.redirect_status, preserve_path = EXCLUDED.preserve_path,
					updated_at = now()
				WHERE deployed_routes.team_id = EXCLUDED.team_id
				  AND deployed_routes.environment_id = EXCLUDED.environment_id`,
				teamID, applicationID, environmentID, r.DeploymentID, r.Hostname,
				r.Visibility, r.Service, r.BackendService, r.BackendPort, r.BackendNetwork, r.RedirectTo, r.RedirectStatus, r.PreservePath); err != nil {
				return wrap(op, err)
			}
			// The WHERE above skips a hostname another environment serves;
			// that is a conflict, not a silent no-op.
			var owner string
			if err := tx.db.QueryRow(ctx, `SELECT environment_id FROM deployed_routes WHERE hostname = $1`, r.Hostname).Scan(&owner); err != nil {
				return wrap(op, err)
			}
			if owner != environmentID {
				return wrap(op, &ConflictError{Constraint: "deployed_routes_pkey", Field: "hostname", Code: "hostname_conflict", Value: r.Hostname})
			}
		}
		return nil
	})
}

// DeleteEnvironmentRoutes withdraws every route of the environment and
// returns how many there were.
func (s *Store) DeleteEnvironmentRoutes(ctx context.Context, teamID, environmentID string) (int64, error) {
	tag, err := s.db.Exec(ctx, `
		DELETE FROM deployed_routes WHERE team_id = $1 AND environment_id = $2`, teamID, environmentID)
	return tag.RowsAffected(), wrap("delete environment routes", err)
}

// ListEnvironmentRoutes returns the routes the environment serves, by hostname.
func (s *Store) ListEnvironmentRoutes(ctx context.Context, teamID, environmentID string) ([]DeployedRoute, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+routeColumns+` FROM deployed_routes
		WHERE team_id = $1 AND environment_id = $2
		ORDER BY hostname`, teamID, environmentID)
	return collectRoutes("list environment routes", rows, err)
}

// RouteTableVersion returns the route table's current version. It spans
// teams (maintenance: serve's gateway feed).
func (s *Store) RouteTableVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.db.QueryRow(ctx, `SELECT version FROM route_table_version`).Scan(&v)
	return v, wrap("route table version", err)
}

// RouteTable returns the whole route table of every team and its version,
// read in one snapshot (a repeatable-read transaction unless s already is
// one), so the version always describes exactly those routes. It spans
// teams (maintenance: only serve's gateway feed calls it).
func (s *Store) RouteTable(ctx context.Context) (int64, []DeployedRoute, error) {
	const op = "route table"
	read := func(db DBTX) (int64, []DeployedRoute, error) {
		var version int64
		if err := db.QueryRow(ctx, `SELECT version FROM route_table_version`).Scan(&version); err != nil {
			return 0, nil, wrap(op, err)
		}
		rows, err := db.Query(ctx, `SELECT `+routeColumns+` FROM deployed_routes ORDER BY hostname`)
		routes, err := collectRoutes(op, rows, err)
		return version, routes, err
	}
	if s.tx != nil {
		return read(s.db)
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, nil, wrap(op, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	return read(tx)
}
