-- The first response to a mutating API request sent with an
-- Idempotency-Key, replayed for repeats of the same key. A row with a NULL
-- status is a request still running: a concurrent duplicate is refused
-- instead of running twice. Rows live 24 hours; an abandoned claim (the
-- server died mid-request) may be taken over after claimed_until.
CREATE TABLE idempotency_keys (
    team_id        text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    -- The API token that sent the request: keys are private to it.
    principal      text NOT NULL,
    key            text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    method         text NOT NULL,
    path           text NOT NULL,
    -- sha-256 of what was asked (query, content type, body), so reusing a
    -- key for a different request is refused rather than replayed.
    request_hash   bytea NOT NULL,
    status         integer,
    content_type   text NOT NULL DEFAULT '',
    body           bytea,
    created_at     timestamptz NOT NULL DEFAULT now(),
    claimed_until  timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    PRIMARY KEY (team_id, principal, key, method, path)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);
