-- Secrets. Values are sealed by the keyring (AES-256-GCM under a
-- key-encryption key from SLIPWAY_SECRET_KEY_FILE); a row holds the id of
-- the key, the nonce and the ciphertext, never a plaintext. The sealing's
-- additional data names the row (team, application, secret or environment,
-- name, version), so a ciphertext copied into another row does not open.

-- The application's secret store: one row per name, values in
-- secret_versions. Deleting marks the row: deployments that pinned a version
-- can still be restored until it is purged, and the name is free at once.
CREATE TABLE secrets (
    id               text PRIMARY KEY,
    team_id          text NOT NULL,
    application_id   text NOT NULL,
    name             text NOT NULL CHECK (name ~ '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$'),
    current_version  integer NOT NULL DEFAULT 0 CHECK (current_version >= 0),
    -- Access: every environment, including later ones (the default), or only
    -- those in secret_environments; previews only with the flag, since
    -- "every environment" never includes previews.
    all_environments boolean NOT NULL DEFAULT true,
    previews         boolean NOT NULL DEFAULT false,
    created_by       text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    deleted_at       timestamptz,
    CONSTRAINT secrets_application_fkey FOREIGN KEY (team_id, application_id)
        REFERENCES applications (team_id, id) ON DELETE CASCADE,
    CONSTRAINT secrets_team_id_id_key UNIQUE (team_id, id),
    CONSTRAINT secrets_team_app_id_key UNIQUE (team_id, application_id, id)
);
CREATE UNIQUE INDEX secrets_application_id_name_key ON secrets (application_id, name) WHERE deleted_at IS NULL;

CREATE TABLE secret_versions (
    team_id     text NOT NULL,
    secret_id   text NOT NULL,
    version     integer NOT NULL CHECK (version > 0),
    key_id      text NOT NULL CHECK (key_id <> ''),
    nonce       bytea NOT NULL,
    ciphertext  bytea NOT NULL,
    created_by  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (secret_id, version),
    CONSTRAINT secret_versions_secret_fkey FOREIGN KEY (team_id, secret_id)
        REFERENCES secrets (team_id, id) ON DELETE CASCADE
);
CREATE INDEX secret_versions_key_id_idx ON secret_versions (key_id);

-- The environments a secret with all_environments = false may be mounted
-- in. Environment ids, so a renamed environment keeps its access; a deleted
-- one drops out of every list through the cascade. The foreign key keeps
-- lists inside the secret's application.
CREATE TABLE secret_environments (
    team_id        text NOT NULL,
    application_id text NOT NULL,
    secret_id      text NOT NULL,
    environment_id text NOT NULL,
    PRIMARY KEY (secret_id, environment_id),
    CONSTRAINT secret_environments_secret_fkey FOREIGN KEY (team_id, application_id, secret_id)
        REFERENCES secrets (team_id, application_id, id) ON DELETE CASCADE,
    CONSTRAINT secret_environments_environment_fkey FOREIGN KEY (team_id, application_id, environment_id)
        REFERENCES environments (team_id, application_id, id) ON DELETE CASCADE
);

-- Generated secrets: one head row per environment (or preview) and name,
-- created when a deployment first mounts the name, and its versions.
-- regenerate asks the next capture for a new version.
CREATE TABLE generated_secrets (
    team_id         text NOT NULL,
    application_id  text NOT NULL,
    environment_id  text NOT NULL,
    name            text NOT NULL CHECK (name ~ '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$'),
    current_version integer NOT NULL DEFAULT 0 CHECK (current_version >= 0),
    regenerate      boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment_id, name),
    CONSTRAINT generated_secrets_environment_fkey FOREIGN KEY (team_id, application_id, environment_id)
        REFERENCES environments (team_id, application_id, id) ON DELETE CASCADE
);

CREATE TABLE generated_secret_versions (
    team_id        text NOT NULL,
    environment_id text NOT NULL,
    name           text NOT NULL,
    version        integer NOT NULL CHECK (version > 0),
    key_id         text NOT NULL CHECK (key_id <> ''),
    nonce          bytea NOT NULL,
    ciphertext     bytea NOT NULL,
    -- The deployment whose capture generated it, or '' (tests, tools).
    generated_by   text NOT NULL DEFAULT '',
    generated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment_id, name, version),
    CONSTRAINT generated_secret_versions_head_fkey FOREIGN KEY (environment_id, name)
        REFERENCES generated_secrets (environment_id, name) ON DELETE CASCADE
);
CREATE INDEX generated_secret_versions_key_id_idx ON generated_secret_versions (key_id);
