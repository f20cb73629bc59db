-- Repository-backed applications (spec.manifest): what each deployment
-- read from the repository, so retries, restores and promotions reuse the
-- exact bytes and never read the repository again; one-off refs; and the
-- sync bookkeeping of deploy-on-push.

-- The manifest file a deployment fetched, and the commit it fetched it at.
CREATE TABLE deployment_fetches (
    deployment_id  text PRIMARY KEY REFERENCES deployments (id) ON DELETE CASCADE,
    team_id        text NOT NULL,
    environment_id text NOT NULL,
    repository_url text NOT NULL,
    branch         text NOT NULL DEFAULT '',
    commit         text NOT NULL CHECK (commit ~ '^[0-9a-f]{40}$'),
    manifest_path  text NOT NULL,
    -- The file exactly as read (TOML or JSON).
    manifest       bytea NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX deployment_fetches_environment_idx ON deployment_fetches (environment_id, created_at DESC);

-- The `path` files a deployment mounts, read at its fetched commit.
CREATE TABLE deployment_files (
    deployment_id text NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
    team_id       text NOT NULL,
    path          text NOT NULL,
    content       bytea NOT NULL,
    PRIMARY KEY (deployment_id, path)
);

-- A one-off branch or commit a deployment reads instead of the
-- environment's (`slipway env deploy --branch/--commit`).
CREATE TABLE deployment_refs (
    deployment_id text PRIMARY KEY REFERENCES deployments (id) ON DELETE CASCADE,
    team_id       text NOT NULL,
    branch        text NOT NULL DEFAULT '',
    commit        text NOT NULL DEFAULT ''
);

-- Per application: the manifest last read from the repository (to tell a
-- saved manifest edited by hand from the repository's) and the sync
-- checks' outcome and backoff.
CREATE TABLE application_repository_state (
    application_id     text PRIMARY KEY REFERENCES applications (id) ON DELETE CASCADE,
    team_id            text NOT NULL,
    last_read_manifest jsonb,
    last_read_commit   text NOT NULL DEFAULT '',
    last_checked_at    timestamptz,
    last_error         text NOT NULL DEFAULT '',
    failures           integer NOT NULL DEFAULT 0,
    next_check_at      timestamptz
);

-- Per environment: the branch head sync last requested a deployment for,
-- so each head deploys once and a failed head waits for the branch to move.
CREATE TABLE environment_sync (
    environment_id   text PRIMARY KEY REFERENCES environments (id) ON DELETE CASCADE,
    team_id          text NOT NULL,
    requested_commit text NOT NULL DEFAULT '',
    requested_at     timestamptz
);
