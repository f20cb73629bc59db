-- Quotas per team. quota_defaults holds the daemon's [quotas] settings,
-- written by serve and worker when they start, so every process checks
-- against the same values; team_quotas holds the operator's overrides
-- (slipway admin team quota), NULL meaning the default. A quota missing
-- from both is unlimited.
CREATE TABLE quota_defaults (
    singleton              boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    applications           bigint CHECK (applications >= 0),
    environments           bigint CHECK (environments >= 0),
    previews               bigint CHECK (previews >= 0),
    replicas               bigint CHECK (replicas >= 0),
    cpu_millis             bigint CHECK (cpu_millis >= 0),
    memory_bytes           bigint CHECK (memory_bytes >= 0),
    volumes                bigint CHECK (volumes >= 0),
    secrets                bigint CHECK (secrets >= 0),
    concurrent_builds      bigint CHECK (concurrent_builds >= 1),
    concurrent_deployments bigint CHECK (concurrent_deployments >= 1),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE team_quotas (
    team_id                text PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
    applications           bigint CHECK (applications >= 0),
    environments           bigint CHECK (environments >= 0),
    previews               bigint CHECK (previews >= 0),
    replicas               bigint CHECK (replicas >= 0),
    cpu_millis             bigint CHECK (cpu_millis >= 0),
    memory_bytes           bigint CHECK (memory_bytes >= 0),
    volumes                bigint CHECK (volumes >= 0),
    secrets                bigint CHECK (secrets >= 0),
    concurrent_builds      bigint CHECK (concurrent_builds >= 1),
    concurrent_deployments bigint CHECK (concurrent_deployments >= 1),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

-- A deployment building images holds one of its team's build slots from
-- the start of its build until its prepare step ends (or its worker's
-- lease expires).
ALTER TABLE deployments ADD COLUMN building_since timestamptz;
