package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ReportGatewayAddresses replaces a gateway's addresses: addresses maps
// each ingress network it is on to its IPv4 address there. It spans teams
// (maintenance: only serve's gateway feed calls it, with what a gateway
// agent sent).
func (s *Store) ReportGatewayAddresses(ctx context.Context, gateway string, addresses map[string]string) error {
	networks := make([]string, 0, len(addresses))
	ips := make([]string, 0, len(addresses))
	for n, ip := range addresses {
		networks, ips = append(networks, n), append(ips, ip)
	}
	_, err := s.db.Exec(ctx, `
		WITH gone AS (
			DELETE FROM gateway_addresses WHERE gateway = $1 AND network <> ALL($2::text[])
		)
		INSERT INTO gateway_addresses (gateway, network, address)
		SELECT $1, n, a::inet FROM unnest($2::text[], $3::text[]) AS t(n, a)
		ON CONFLICT (gateway, network) DO UPDATE SET address = EXCLUDED.address, reported_at = now()`,
		gateway, networks, ips)
	return wrap("report gateway addresses", err)
}

// GatewayAddresses lists the addresses gateways reported on network since
// the given time, in order. It spans teams (maintenance: the deployment
// pipeline gives them to the services routed there).
func (s *Store) GatewayAddresses(ctx context.Context, network string, since time.Time) ([]string, error) {
	rows, err := s.db.Query(ctx, `
		SELECT host(address) FROM gateway_addresses
		WHERE network = $1 AND reported_at >= $2 ORDER BY address`, network, since)
	if err != nil {
		return nil, wrap("list gateway addresses", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return list, wrap("list gateway addresses", err)
}
