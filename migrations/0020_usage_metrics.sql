-- Usage over time, sampled every 15 s by the worker: each service's CPU,
-- memory, network and restarts, and each route's requests, errors and
-- latency. Full resolution is kept 24 hours, 5-minute averages 30 days
-- (docs/notifications.md, Usage charts).
--
-- A series is one service or route of an environment; samples name it by
-- a 4-byte id so a sample row stays small.
CREATE TABLE metric_series (
    id             integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    team_id        text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    environment_id text NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    kind           text NOT NULL CHECK (kind IN ('service', 'route')),
    name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 253),
    UNIQUE (environment_id, kind, name)
);
CREATE INDEX metric_series_team_idx ON metric_series (team_id, environment_id);

-- cpu: cores in use (1 = one core) and memory: bytes, summed over the
-- sampled tasks; rx and tx: bytes per second; restarts: tasks Swarm
-- retains that ended on their own; tasks: running tasks; sampled: tasks
-- whose stats are in the row (tasks on nodes no worker samples are not).
-- NULL rates: the first sample of a task has nothing to compare with.
CREATE TABLE service_samples (
    series_id integer NOT NULL REFERENCES metric_series (id) ON DELETE CASCADE,
    at        timestamptz NOT NULL,
    cpu       real,
    memory    bigint,
    rx        real,
    tx        real,
    restarts  integer NOT NULL DEFAULT 0,
    tasks     smallint NOT NULL DEFAULT 0,
    sampled   smallint NOT NULL DEFAULT 0,
    PRIMARY KEY (series_id, at)
);

CREATE TABLE service_samples_5m (
    series_id integer NOT NULL REFERENCES metric_series (id) ON DELETE CASCADE,
    at        timestamptz NOT NULL,
    cpu       real,
    memory    bigint,
    rx        real,
    tx        real,
    restarts  integer NOT NULL DEFAULT 0,
    tasks     smallint NOT NULL DEFAULT 0,
    sampled   smallint NOT NULL DEFAULT 0,
    PRIMARY KEY (series_id, at)
);

-- requests answered in the slot, errors (5xx) among them, and latency:
-- how many fell in each bucket of the gateway's histogram (its bounds,
-- then the rest), so percentiles of any span can be computed.
CREATE TABLE route_samples (
    series_id integer NOT NULL REFERENCES metric_series (id) ON DELETE CASCADE,
    at        timestamptz NOT NULL,
    requests  integer NOT NULL,
    errors    integer NOT NULL,
    latency   integer[] NOT NULL,
    PRIMARY KEY (series_id, at)
);

CREATE TABLE route_samples_5m (
    series_id integer NOT NULL REFERENCES metric_series (id) ON DELETE CASCADE,
    at        timestamptz NOT NULL,
    requests  integer NOT NULL,
    errors    integer NOT NULL,
    latency   integer[] NOT NULL,
    PRIMARY KEY (series_id, at)
);

-- Retention deletes by time alone: block ranges suit rows appended in
-- time order, at a fraction of a b-tree's size.
CREATE INDEX service_samples_at_idx ON service_samples USING brin (at);
CREATE INDEX service_samples_5m_at_idx ON service_samples_5m USING brin (at);
CREATE INDEX route_samples_at_idx ON route_samples USING brin (at);
CREATE INDEX route_samples_5m_at_idx ON route_samples_5m USING brin (at);

-- Which worker samples what: scope is "cluster" (Swarm-wide counts, the
-- gateway, rollups) or "node:<node id>" (the containers of one node). A
-- worker holds a scope while its lease lasts; last_slot makes each slot
-- sampled once per scope.
CREATE TABLE metric_samplers (
    scope       text PRIMARY KEY,
    owner       text NOT NULL,
    lease_until timestamptz NOT NULL,
    last_slot   timestamptz NOT NULL
);
