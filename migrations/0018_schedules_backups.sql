-- Scheduled jobs and backups (docs/schedules.md, docs/backups.md).

-- schedules: what each environment's current deployment runs on a
-- schedule, one row per scheduled job or scheduled backup. A successful
-- deployment replaces the environment's set; the tick (jobs) claims rows
-- whose next_run_at has passed and moves next_run_at past now, so a run
-- missed while no worker ran happens once, not once per missed slot.
CREATE TABLE schedules (
    id             text PRIMARY KEY,
    team_id        text NOT NULL,
    application_id text NOT NULL,
    environment_id text NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('job', 'backup')),
    name           text NOT NULL,
    spec           text NOT NULL,
    -- subject: what a scheduled backup copies, "volume:<name>" or
    -- "postgres:<service>"; '' for a job.
    subject        text NOT NULL DEFAULT '',
    concurrency    text NOT NULL DEFAULT 'forbid' CHECK (concurrency IN ('forbid', 'replace')),
    deployment_id  text NOT NULL,
    next_run_at    timestamptz NOT NULL,
    last_run_at    timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT schedules_environment_fkey FOREIGN KEY (team_id, environment_id)
        REFERENCES environments (team_id, id) ON DELETE CASCADE,
    CONSTRAINT schedules_environment_kind_name_key UNIQUE (environment_id, kind, name)
);
CREATE INDEX schedules_due ON schedules (next_run_at);
CREATE INDEX schedules_team_env ON schedules (team_id, environment_id);

-- job_runs: each run of a scheduled job, scheduled or started by hand.
CREATE TABLE job_runs (
    id             text PRIMARY KEY,
    team_id        text NOT NULL,
    application_id text NOT NULL,
    environment_id text NOT NULL,
    job            text NOT NULL,
    origin         text NOT NULL CHECK (origin IN ('scheduled', 'manual')),
    state          text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'skipped', 'stopped')),
    scheduled_for  timestamptz,
    deployment_id  text NOT NULL DEFAULT '',
    service_name   text NOT NULL DEFAULT '',
    exit_code      integer,
    output         text NOT NULL DEFAULT '',
    message        text NOT NULL DEFAULT '',
    actor          text NOT NULL DEFAULT '',
    started_at     timestamptz,
    ended_at       timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT job_runs_environment_fkey FOREIGN KEY (team_id, environment_id)
        REFERENCES environments (team_id, id) ON DELETE CASCADE
);
CREATE INDEX job_runs_env_job ON job_runs (team_id, environment_id, job, created_at DESC);
CREATE INDEX job_runs_active ON job_runs (environment_id, job) WHERE state IN ('queued', 'running');

-- backups: one copy of a volume or a Postgres database. Rows outlive the
-- environment (its name is kept) so a backup can be restored into another
-- environment of the application after its own is gone.
CREATE TABLE backups (
    id               text PRIMARY KEY,
    team_id          text NOT NULL,
    application_id   text NOT NULL,
    environment_id   text NOT NULL,
    environment_name text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('volume', 'postgres')),
    subject          text NOT NULL,
    name             text NOT NULL DEFAULT '',
    origin           text NOT NULL CHECK (origin IN ('scheduled', 'manual')),
    state            text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'deleted')),
    target           text NOT NULL DEFAULT '' CHECK (target IN ('', 'directory', 's3')),
    location         text NOT NULL DEFAULT '',
    size_bytes       bigint NOT NULL DEFAULT 0,
    sha256           text NOT NULL DEFAULT '',
    message          text NOT NULL DEFAULT '',
    actor            text NOT NULL DEFAULT '',
    started_at       timestamptz,
    ended_at         timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT backups_application_fkey FOREIGN KEY (team_id, application_id)
        REFERENCES applications (team_id, id) ON DELETE CASCADE
);
CREATE INDEX backups_team_env ON backups (team_id, environment_id, created_at DESC);

-- restores: a backup copied back into an environment. While one is
-- stopping, restoring or starting, deployments of that environment are
-- refused; a failed one leaves the environment stopped (held) until a
-- deployment or another restore succeeds.
CREATE TABLE restores (
    id             text PRIMARY KEY,
    team_id        text NOT NULL,
    application_id text NOT NULL,
    environment_id text NOT NULL,
    backup_id      text NOT NULL REFERENCES backups (id) ON DELETE CASCADE,
    state          text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'stopping', 'restoring', 'starting', 'succeeded', 'failed')),
    stopped        text[] NOT NULL DEFAULT '{}',
    message        text NOT NULL DEFAULT '',
    actor          text NOT NULL DEFAULT '',
    ended_at       timestamptz,
    -- released_at: a failed restore stops holding the environment once a
    -- deployment of it succeeds.
    released_at    timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT restores_environment_fkey FOREIGN KEY (team_id, environment_id)
        REFERENCES environments (team_id, id) ON DELETE CASCADE
);
CREATE INDEX restores_team_env ON restores (team_id, environment_id, created_at DESC);
CREATE UNIQUE INDEX restores_one_active_key ON restores (environment_id)
    WHERE state IN ('pending', 'stopping', 'restoring', 'starting');

-- backup_targets: an environment's S3-compatible target; without a row
-- its backups go to the directory on the manager. The secret access key
-- is sealed with the keyring like a secret value.
CREATE TABLE backup_targets (
    environment_id    text PRIMARY KEY,
    team_id           text NOT NULL,
    endpoint          text NOT NULL,
    bucket            text NOT NULL,
    prefix            text NOT NULL DEFAULT '',
    region            text NOT NULL DEFAULT '',
    insecure          boolean NOT NULL DEFAULT false,
    access_key_id     text NOT NULL,
    secret_nonce      bytea NOT NULL,
    secret_sealed     bytea NOT NULL,
    key_id            text NOT NULL,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT backup_targets_environment_fkey FOREIGN KEY (team_id, environment_id)
        REFERENCES environments (team_id, id) ON DELETE CASCADE
);
