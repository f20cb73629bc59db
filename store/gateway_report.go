package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// GatewayReport is what one gateway last reported serving: the route table
// version, and the hostnames of it that it can serve (Live).
type GatewayReport struct {
	Gateway      string
	TableVersion int64
	Live         []string
	ReportedAt   time.Time
}

// ReportGateway stores a gateway's report, replacing its last one. It
// spans teams (maintenance: only serve's gateway feed calls it, with what
// the gateway sent).
func (s *Store) ReportGateway(ctx context.Context, r GatewayReport) error {
	live := r.Live
	if live == nil {
		live = []string{}
	}
	_, err := s.db.Exec(ctx, `
		INSERT INTO gateway_reports (gateway, table_version, live) VALUES ($1, $2, $3)
		ON CONFLICT (gateway) DO UPDATE SET
			table_version = EXCLUDED.table_version, live = EXCLUDED.live, reported_at = now()`,
		r.Gateway, r.TableVersion, live)
	return wrap("report gateway", err)
}

// ListGatewayReports returns the reports received since the given time,
// by gateway name. It spans teams (maintenance: the deployment pipeline
// waits on them, routelive).
func (s *Store) ListGatewayReports(ctx context.Context, since time.Time) ([]GatewayReport, error) {
	rows, err := s.db.Query(ctx, `
		SELECT gateway, table_version, live, reported_at FROM gateway_reports
		WHERE reported_at >= $1 ORDER BY gateway`, since)
	if err != nil {
		return nil, wrap("list gateway reports", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (GatewayReport, error) {
		var g GatewayReport
		err := r.Scan(&g.Gateway, &g.TableVersion, &g.Live, &g.ReportedAt)
		return g, err
	})
	return list, wrap("list gateway reports", err)
}
