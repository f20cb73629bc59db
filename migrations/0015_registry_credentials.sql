-- Teams' credentials for private image registries: one per team and
-- registry host. The password (or token) is sealed by the keyring like a
-- secret value: the row holds the key id, nonce and ciphertext, and the
-- sealing's additional data names the team, the row and the host, so a
-- ciphertext copied to another team's row does not open. The worker
-- opens it only to pull (and let Swarm pull) that team's images.
CREATE TABLE registry_credentials (
    id          text PRIMARY KEY,
    team_id     text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    host        text NOT NULL CHECK (host ~ '^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$'),
    username    text NOT NULL CHECK (length(username) BETWEEN 1 AND 255),
    key_id      text NOT NULL CHECK (key_id <> ''),
    nonce       bytea NOT NULL,
    ciphertext  bytea NOT NULL,
    created_by  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT registry_credentials_team_host_key UNIQUE (team_id, host)
);
CREATE INDEX registry_credentials_key_id_idx ON registry_credentials (key_id);
-- Whether any team holds credentials for a host (images from there may be
-- private): see store.RegistryHostHasCredentials.
CREATE INDEX registry_credentials_host_idx ON registry_credentials (host);

-- The embedded (or external) registry's manifests that the image cleanup
-- found unreferenced, and when it first did. A manifest is deleted only
-- once it stayed unreferenced for a grace period: an image pushed by a
-- deployment still preparing is referenced only when that step records
-- it, so a cleanup in between must not delete it.
CREATE TABLE registry_prune_marks (
    reference  text PRIMARY KEY,
    marked_at  timestamptz NOT NULL DEFAULT now()
);
