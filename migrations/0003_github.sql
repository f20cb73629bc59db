-- The GitHub App: its credentials, installations bound to teams, the
-- repositories applications connect to, webhook deliveries, install states
-- and the per-pull-request bookkeeping of previews and their comment.

-- The App registered for this Slipway installation (manifest flow or entered
-- by hand). Secrets are sealed by the daemon's keyring before they reach the
-- store; key ids say which key sealed them so keys can rotate.
CREATE TABLE github_apps (
    app_id                 bigint PRIMARY KEY CHECK (app_id > 0),
    slug                   text NOT NULL CHECK (length(slug) BETWEEN 1 AND 100),
    name                   text NOT NULL DEFAULT '',
    client_id              text NOT NULL DEFAULT '',
    html_url               text NOT NULL DEFAULT '',
    private_key_sealed     bytea NOT NULL,
    private_key_key_id     text NOT NULL,
    webhook_secret_sealed  bytea NOT NULL,
    webhook_secret_key_id  text NOT NULL,
    client_secret_sealed   bytea,
    client_secret_key_id   text NOT NULL DEFAULT '',
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

-- An installation is known from its webhook before the setup callback binds
-- it to a team, hence the nullable team_id; one installation serves one team.
CREATE TABLE github_installations (
    installation_id bigint PRIMARY KEY CHECK (installation_id > 0),
    team_id         text REFERENCES teams (id) ON DELETE SET NULL,
    account_login   text NOT NULL DEFAULT '',
    account_type    text NOT NULL DEFAULT '',
    bound_by        text REFERENCES users (id) ON DELETE SET NULL,
    bound_at        timestamptz,
    suspended_at    timestamptz,
    deleted_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX github_installations_team_idx ON github_installations (team_id) WHERE team_id IS NOT NULL;

-- The repository an application connects to (one per application).
CREATE TABLE github_repository_links (
    team_id         text NOT NULL,
    application_id  text NOT NULL,
    installation_id bigint NOT NULL REFERENCES github_installations (installation_id) ON DELETE CASCADE,
    repository_id   bigint NOT NULL CHECK (repository_id > 0),
    full_name       text NOT NULL CHECK (full_name ~ '^[^/]+/[^/]+$'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, application_id),
    CONSTRAINT github_repository_links_application_fkey FOREIGN KEY (team_id, application_id)
        REFERENCES applications (team_id, id) ON DELETE CASCADE
);
CREATE INDEX github_repository_links_repository_idx ON github_repository_links (team_id, repository_id);
CREATE INDEX github_repository_links_installation_idx ON github_repository_links (installation_id);

-- Every webhook delivery, recorded in the transaction that enqueues its job;
-- the primary key is what makes a replayed delivery a no-op. summary holds
-- the few fields the job needs, taken from the verified payload.
CREATE TABLE github_webhook_deliveries (
    delivery_id     text PRIMARY KEY CHECK (length(delivery_id) BETWEEN 1 AND 100),
    event           text NOT NULL CHECK (length(event) BETWEEN 1 AND 100),
    action          text NOT NULL DEFAULT '',
    installation_id bigint,
    summary         jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(summary) = 'object'),
    received_at     timestamptz NOT NULL DEFAULT now(),
    processed_at    timestamptz
);
CREATE INDEX github_webhook_deliveries_received_idx ON github_webhook_deliveries (received_at);

-- Nonces of install states that were used: a state verifies once.
CREATE TABLE github_install_states (
    nonce      bytea PRIMARY KEY CHECK (length(nonce) = 16),
    team_id    text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id    text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX github_install_states_expires_idx ON github_install_states (expires_at);

-- One row per application per pull request: whether it gets a preview
-- (automatic, pending approval, approved), its latest head, and the id of
-- the one comment Slipway keeps updated on it.
CREATE TABLE github_pull_requests (
    id              text PRIMARY KEY,
    team_id         text NOT NULL,
    application_id  text NOT NULL,
    installation_id bigint NOT NULL,
    repository_id   bigint NOT NULL,
    full_name       text NOT NULL,
    number          integer NOT NULL CHECK (number > 0),
    head_branch     text NOT NULL DEFAULT '',
    head_sha        text NOT NULL DEFAULT '',
    author_login    text NOT NULL DEFAULT '',
    from_fork       boolean NOT NULL DEFAULT false,
    approval        text NOT NULL CHECK (approval IN ('automatic', 'pending', 'approved')),
    approved_by     text REFERENCES users (id) ON DELETE SET NULL,
    state           text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
    status          text NOT NULL DEFAULT 'queued' CHECK (status IN (
        'approval_required', 'queued', 'building', 'deploying', 'ready', 'failed', 'removed')),
    deployment_id   text NOT NULL DEFAULT '',
    comment_id      bigint NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT github_pull_requests_application_fkey FOREIGN KEY (team_id, application_id)
        REFERENCES applications (team_id, id) ON DELETE CASCADE,
    CONSTRAINT github_pull_requests_pr_key UNIQUE (team_id, application_id, repository_id, number)
);
CREATE INDEX github_pull_requests_deployment_idx ON github_pull_requests (team_id, deployment_id) WHERE deployment_id <> '';
