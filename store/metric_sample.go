package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Metric series kinds.
const (
	SeriesService = "service"
	SeriesRoute   = "route"
)

// SeriesKey names one usage series: a service (by manifest name) or a
// route (by hostname) of an environment.
type SeriesKey struct {
	TeamID        string
	EnvironmentID string
	Kind          string
	Name          string
}

// EnsureMetricSeries returns the id of each key's series, creating the
// missing ones. A key whose environment is not the team's (or is gone) is
// left out. It spans teams (the sampler sees every environment). It reads
// first and writes only when a series is missing: the sampler asks for
// every series each slot, and they nearly always exist.
func (s *Store) EnsureMetricSeries(ctx context.Context, keys []SeriesKey) (map[SeriesKey]int32, error) {
	const op = "ensure metric series"
	teams, envs, kinds, names := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	want := map[SeriesKey]struct{}{}
	for i, k := range keys {
		teams[i], envs[i], kinds[i], names[i] = k.TeamID, k.EnvironmentID, k.Kind, k.Name
		want[k] = struct{}{}
	}
	out, err := s.metricSeries(ctx, teams, envs, kinds, names)
	if err != nil || len(out) == len(want) {
		return out, wrap(op, err)
	}
	if _, err := s.db.Exec(ctx, `
		INSERT INTO metric_series (team_id, environment_id, kind, name)
		SELECT k.team_id, k.environment_id, k.kind, k.name
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS k(team_id, environment_id, kind, name)
		JOIN environments e ON e.team_id = k.team_id AND e.id = k.environment_id
		ON CONFLICT (environment_id, kind, name) DO NOTHING`, teams, envs, kinds, names); err != nil {
		return nil, wrap(op, err)
	}
	out, err = s.metricSeries(ctx, teams, envs, kinds, names)
	return out, wrap(op, err)
}

// metricSeries returns the ids of the series that exist among the keys,
// given column by column.
func (s *Store) metricSeries(ctx context.Context, teams, envs, kinds, names []string) (map[SeriesKey]int32, error) {
	rows, err := s.db.Query(ctx, `
		SELECT m.id, m.team_id, m.environment_id, m.kind, m.name
		FROM metric_series m
		JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS k(team_id, environment_id, kind, name)
			ON m.team_id = k.team_id AND m.environment_id = k.environment_id AND m.kind = k.kind AND m.name = k.name`,
		teams, envs, kinds, names)
	if err != nil {
		return nil, err
	}
	out := map[SeriesKey]int32{}
	var id int32
	var k SeriesKey
	_, err = pgx.ForEachRow(rows, []any{&id, &k.TeamID, &k.EnvironmentID, &k.Kind, &k.Name}, func() error {
		out[k] = id
		return nil
	})
	return out, err
}

// ServiceSample is one slot of a service. Samples of one slot written by
// several samplers (one per node) add up: CPU, memory, network and
// Sampled are summed, Restarts and Tasks (counted Swarm-wide) take the
// larger value. A nil rate is unknown.
type ServiceSample struct {
	SeriesID int32
	CPU      *float32
	Memory   *int64
	RX, TX   *float32
	Restarts int32
	Tasks    int16
	Sampled  int16
}

// AddServiceSamples writes one slot's service samples (see ServiceSample
// for how they merge).
func (s *Store) AddServiceSamples(ctx context.Context, at time.Time, samples []ServiceSample) error {
	if len(samples) == 0 {
		return nil
	}
	n := len(samples)
	ids, cpu, mem, rx, tx := make([]int32, n), make([]*float32, n), make([]*int64, n), make([]*float32, n), make([]*float32, n)
	restarts, tasks, sampled := make([]int32, n), make([]int16, n), make([]int16, n)
	for i, x := range samples {
		ids[i], cpu[i], mem[i], rx[i], tx[i] = x.SeriesID, x.CPU, x.Memory, x.RX, x.TX
		restarts[i], tasks[i], sampled[i] = x.Restarts, x.Tasks, x.Sampled
	}
	_, err := s.db.Exec(ctx, `
		INSERT INTO service_samples AS s (series_id, at, cpu, memory, rx, tx, restarts, tasks, sampled)
		SELECT u.series_id, $1, u.cpu, u.memory, u.rx, u.tx, u.restarts, u.tasks, u.sampled
		FROM unnest($2::int[], $3::real[], $4::bigint[], $5::real[], $6::real[], $7::int[], $8::smallint[], $9::smallint[])
			AS u(series_id, cpu, memory, rx, tx, restarts, tasks, sampled)
		ON CONFLICT (series_id, at) DO UPDATE SET
			cpu = CASE WHEN s.cpu IS NULL THEN EXCLUDED.cpu ELSE s.cpu + coalesce(EXCLUDED.cpu, 0) END,
			memory = CASE WHEN s.memory IS NULL THEN EXCLUDED.memory ELSE s.memory + coalesce(EXCLUDED.memory, 0) END,
			rx = CASE WHEN s.rx IS NULL THEN EXCLUDED.rx ELSE s.rx + coalesce(EXCLUDED.rx, 0) END,
			tx = CASE WHEN s.tx IS NULL THEN EXCLUDED.tx ELSE s.tx + coalesce(EXCLUDED.tx, 0) END,
			restarts = greatest(s.restarts, EXCLUDED.restarts),
			tasks = greatest(s.tasks, EXCLUDED.tasks),
			sampled = s.sampled + EXCLUDED.sampled`,
		at, ids, cpu, mem, rx, tx, restarts, tasks, sampled)
	return wrap("add service samples", err)
}

// RouteSample is one slot of a route: requests answered, errors (5xx)
// among them, and how many fell in each latency bucket.
type RouteSample struct {
	SeriesID int32
	Requests int32
	Errors   int32
	Latency  []int32
}

// AddRouteSamples writes one slot's route samples in one statement;
// writing a slot again replaces it.
func (s *Store) AddRouteSamples(ctx context.Context, at time.Time, samples []RouteSample) error {
	if len(samples) == 0 {
		return nil
	}
	n := len(samples)
	ids, requests, errs, latency := make([]int32, n), make([]int32, n), make([]int32, n), make([]string, n)
	for i, x := range samples {
		ids[i], requests[i], errs[i], latency[i] = x.SeriesID, x.Requests, x.Errors, intArrayLiteral(x.Latency)
	}
	// Arrays of arrays must be rectangular in Postgres: each histogram
	// travels as its array literal and is cast back per row.
	_, err := s.db.Exec(ctx, `
		INSERT INTO route_samples (series_id, at, requests, errors, latency)
		SELECT u.series_id, $1, u.requests, u.errors, u.latency::int[]
		FROM unnest($2::int[], $3::int[], $4::int[], $5::text[]) AS u(series_id, requests, errors, latency)
		ON CONFLICT (series_id, at) DO UPDATE SET requests = EXCLUDED.requests, errors = EXCLUDED.errors, latency = EXCLUDED.latency`,
		at, ids, requests, errs, latency)
	return wrap("add route samples", err)
}

// intArrayLiteral is xs as a Postgres array literal ("{1,2,3}"; nil is
// "{}").
func intArrayLiteral(xs []int32) string {
	b := make([]byte, 0, 4*len(xs)+2)
	b = append(b, '{')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(append(b, '}'))
}

// RollupMetrics writes the 5-minute averages (services) and sums (routes)
// of the full-resolution samples in [from, to), both on 5-minute
// boundaries; running it again rewrites the same buckets. It spans teams.
func (s *Store) RollupMetrics(ctx context.Context, from, to time.Time) error {
	const op = "roll up metrics"
	if _, err := s.db.Exec(ctx, `
		INSERT INTO service_samples_5m (series_id, at, cpu, memory, rx, tx, restarts, tasks, sampled)
		SELECT series_id, date_bin('5 minutes', at, 'epoch'), avg(cpu), avg(memory)::bigint, avg(rx), avg(tx),
			max(restarts), round(avg(tasks))::smallint, max(sampled)
		FROM service_samples WHERE at >= $1 AND at < $2
		GROUP BY 1, 2
		ON CONFLICT (series_id, at) DO UPDATE SET cpu = EXCLUDED.cpu, memory = EXCLUDED.memory, rx = EXCLUDED.rx,
			tx = EXCLUDED.tx, restarts = EXCLUDED.restarts, tasks = EXCLUDED.tasks, sampled = EXCLUDED.sampled`, from, to); err != nil {
		return wrap(op, err)
	}
	_, err := s.db.Exec(ctx, `
		INSERT INTO route_samples_5m (series_id, at, requests, errors, latency)
		SELECT r.series_id, r.bucket, sum(r.requests), sum(r.errors),
			(SELECT array_agg(b.n ORDER BY b.i) FROM (
				SELECT l.i, sum(l.v)::int AS n
				FROM route_samples r2, unnest(r2.latency) WITH ORDINALITY AS l(v, i)
				WHERE r2.series_id = r.series_id AND r2.at >= r.bucket AND r2.at < r.bucket + interval '5 minutes'
				GROUP BY l.i) b)
		FROM (SELECT series_id, date_bin('5 minutes', at, 'epoch') AS bucket, requests, errors
			FROM route_samples WHERE at >= $1 AND at < $2) r
		GROUP BY r.series_id, r.bucket
		ON CONFLICT (series_id, at) DO UPDATE SET requests = EXCLUDED.requests, errors = EXCLUDED.errors, latency = EXCLUDED.latency`,
		from, to)
	return wrap(op, err)
}

// PruneMetrics deletes full-resolution samples before rawBefore and
// 5-minute ones before rollupBefore, across teams.
func (s *Store) PruneMetrics(ctx context.Context, rawBefore, rollupBefore time.Time) error {
	for _, q := range []struct {
		sql string
		at  time.Time
	}{
		{`DELETE FROM service_samples WHERE at < $1`, rawBefore},
		{`DELETE FROM route_samples WHERE at < $1`, rawBefore},
		{`DELETE FROM service_samples_5m WHERE at < $1`, rollupBefore},
		{`DELETE FROM route_samples_5m WHERE at < $1`, rollupBefore},
	} {
		if _, err := s.db.Exec(ctx, q.sql, q.at); err != nil {
			return wrap("prune metrics", err)
		}
	}
	return nil
}

// ClaimMetricSlot claims slot of scope for owner: it succeeds when the
// scope is free, its lease expired or owner holds it, and the slot is
// later than the last one claimed. It returns the previous slot (zero
// when the scope was new). Holding renews the lease for lease.
func (s *Store) ClaimMetricSlot(ctx context.Context, scope, owner string, slot time.Time, lease time.Duration) (claimed bool, previous time.Time, err error) {
	var prev *time.Time
	err = s.db.QueryRow(ctx, `
		WITH old AS (SELECT last_slot FROM metric_samplers WHERE scope = $1)
		INSERT INTO metric_samplers AS m (scope, owner, lease_until, last_slot) VALUES ($1, $2, now() + $4::interval, $3)
		ON CONFLICT (scope) DO UPDATE SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, last_slot = EXCLUDED.last_slot
		WHERE (m.owner = EXCLUDED.owner OR m.lease_until < now()) AND m.last_slot < EXCLUDED.last_slot
		RETURNING (SELECT last_slot FROM old)`, scope, owner, slot, lease.String()).Scan(&prev)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, time.Time{}, nil
	}
	if err != nil {
		return false, time.Time{}, wrap("claim metric slot", err)
	}
	if prev != nil {
		previous = *prev
	}
	return true, previous, nil
}

// ServicePoint is one point of a service's series.
type ServicePoint struct {
	Name     string
	At       time.Time
	CPU      *float64
	Memory   *float64
	RX, TX   *float64
	Restarts int
	Tasks    int
	Sampled  int
}

// usageSource picks the full-resolution or 5-minute table.
func usageSource(kind string, rollup bool) string {
	t := kind + "_samples"
	if rollup {
		t += "_5m"
	}
	return t
}

// ServiceUsage returns the environment's service series in [from, to),
// averaged over step, by service name then time; rollup reads the
// 5-minute averages.
func (s *Store) ServiceUsage(ctx context.Context, teamID, environmentID string, from, to time.Time, step time.Duration, rollup bool) ([]ServicePoint, error) {
	const op = "service usage"
	rows, err := s.db.Query(ctx, fmt.Sprintf(`
		SELECT m.name, date_bin($5::interval, x.at, 'epoch') AS b, avg(x.cpu), avg(x.memory)::float8, avg(x.rx), avg(x.tx),
			max(x.restarts), max(x.tasks), max(x.sampled)
		FROM metric_series m JOIN %s x ON x.series_id = m.id
		WHERE m.team_id = $1 AND m.environment_id = $2 AND m.kind = 'service' AND x.at >= $3 AND x.at < $4
		GROUP BY 1, 2 ORDER BY 1, 2`, usageSource("service", rollup)),
		teamID, environmentID, from, to, step.String())
	if err != nil {
		return nil, wrap(op, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ServicePoint, error) {
		var p ServicePoint
		err := r.Scan(&p.Name, &p.At, &p.CPU, &p.Memory, &p.RX, &p.TX, &p.Restarts, &p.Tasks, &p.Sampled)
		return p, err
	})
	return list, wrap(op, err)
}

// RoutePoint is one sample of a route's series.
type RoutePoint struct {
	Name     string
	At       time.Time
	Requests int64
	Errors   int64
	Latency  []int64
}

// RouteUsage returns the environment's route samples in [from, to), by
// hostname then time (unaggregated: percentiles need the buckets).
func (s *Store) RouteUsage(ctx context.Context, teamID, environmentID string, from, to time.Time, rollup bool) ([]RoutePoint, error) {
	const op = "route usage"
	rows, err := s.db.Query(ctx, fmt.Sprintf(`
		SELECT m.name, x.at, x.requests, x.errors, x.latency
		FROM metric_series m JOIN %s x ON x.series_id = m.id
		WHERE m.team_id = $1 AND m.environment_id = $2 AND m.kind = 'route' AND x.at >= $3 AND x.at < $4
		ORDER BY 1, 2`, usageSource("route", rollup)),
		teamID, environmentID, from, to)
	if err != nil {
		return nil, wrap(op, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RoutePoint, error) {
		var p RoutePoint
		err := r.Scan(&p.Name, &p.At, &p.Requests, &p.Errors, &p.Latency)
		return p, err
	})
	return list, wrap(op, err)
}
