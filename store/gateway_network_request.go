package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequestGatewayNetwork asks the gateways of the ingress nodes to join the
// environment's ingress overlay network until expires, although no route
// goes there yet: a deployment does it before it creates the services
// routed there, so that they start with every gateway's address. It
// replaces the environment's last request; a new one bumps the route
// table version (the table lists the requested networks).
func (s *Store) RequestGatewayNetwork(ctx context.Context, teamID, environmentID, network string, expires time.Time) error {
	tag, err := s.db.Exec(ctx, `
		INSERT INTO gateway_network_requests (team_id, environment_id, network, expires_at)
		SELECT team_id, id, $3, $4 FROM environments WHERE team_id = $1 AND id = $2
		ON CONFLICT (environment_id) DO UPDATE SET network = EXCLUDED.network, expires_at = EXCLUDED.expires_at`,
		teamID, environmentID, network, expires)
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	return wrap("request gateway network", err)
}

// EndGatewayNetworkRequest withdraws the environment's request, once its
// routes hold the network (or it goes away).
func (s *Store) EndGatewayNetworkRequest(ctx context.Context, teamID, environmentID string) error {
	_, err := s.db.Exec(ctx, `
		DELETE FROM gateway_network_requests WHERE team_id = $1 AND environment_id = $2`, teamID, environmentID)
	return wrap("end gateway network request", err)
}

// RequestedGatewayNetworks returns the networks of the unexpired requests,
// by name, and when the first of them expires (zero without any). It
// spans teams on purpose: it is serve's maintenance read for the route
// table, network names only.
func (s *Store) RequestedGatewayNetworks(ctx context.Context) ([]string, time.Time, error) {
	const op = "requested gateway networks"
	rows, err := s.db.Query(ctx, `
		SELECT network, min(expires_at) FROM gateway_network_requests
		WHERE expires_at > now() GROUP BY network ORDER BY network`)
	if err != nil {
		return nil, time.Time{}, wrap(op, err)
	}
	var next time.Time
	names, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var n string
		var exp time.Time
		err := r.Scan(&n, &exp)
		if next.IsZero() || exp.Before(next) {
			next = exp
		}
		return n, err
	})
	return names, next, wrap(op, err)
}

// ExpireGatewayNetworkRequests deletes the expired requests (bumping the
// route table version when there were any) and returns how many. It spans
// teams (maintenance: serve's gateway feed, when the first request it
// published expires).
func (s *Store) ExpireGatewayNetworkRequests(ctx context.Context) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM gateway_network_requests WHERE expires_at <= now()`)
	return tag.RowsAffected(), wrap("expire gateway network requests", err)
}
