package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// RoutedIngressNetworks returns the ingress overlays of every environment
// that has deployed routes with a backend (redirect-only environments need
// none), by name. It spans teams on purpose: it is the control plane's
// maintenance read that lets serve rejoin a re-created gateway container
// to every overlay it must reach, and it returns network names only,
// nothing any team could read through it. Read-only.
func (s *Store) RoutedIngressNetworks(ctx context.Context) ([]string, error) {
	rows, err := s.db.Query(ctx, `
		SELECT DISTINCT backend_network FROM deployed_routes
		WHERE backend_network <> ''
		ORDER BY backend_network`)
	if err != nil {
		return nil, wrap("routed ingress networks", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return names, wrap("routed ingress networks", err)
}
