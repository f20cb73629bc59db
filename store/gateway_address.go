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

// GatewayAddress is one gateway's address on a network.
type GatewayAddress struct {
	Gateway string
	Address string
}

// GatewayAddresses lists the addresses gateways reported on network since
// the given time, in address order. It spans teams (maintenance: the
// deployment pipeline gives them to the services routed there).
func (s *Store) GatewayAddresses(ctx context.Context, network string, since time.Time) ([]GatewayAddress, error) {
	rows, err := s.db.Query(ctx, `
		SELECT gateway, host(address) FROM gateway_addresses
		WHERE network = $1 AND reported_at >= $2 ORDER BY address, gateway`, network, since)
	if err != nil {
		return nil, wrap("list gateway addresses", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[GatewayAddress])
	return list, wrap("list gateway addresses", err)
}

// ForgetGateway deletes what a gateway reported (the routes it serves and
// its addresses): it was removed, and deployments must not wait for it nor
// trust its addresses. It spans teams (maintenance: serve's gateway feed,
// when an agent removes its node's gateway).
func (s *Store) ForgetGateway(ctx context.Context, gateway string) error {
	_, err := s.db.Exec(ctx, `
		WITH addrs AS (DELETE FROM gateway_addresses WHERE gateway = $1)
		DELETE FROM gateway_reports WHERE gateway = $1`, gateway)
	return wrap("forget gateway", err)
}
