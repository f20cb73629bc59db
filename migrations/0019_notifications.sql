-- Notification destinations of a team (webhook, Slack, Discord, e-mail),
-- the deliveries made to them, and the health episodes of services that
-- the "unhealthy for N minutes" and "recovered" events come from.
--
-- A destination's credentials (its URL, the webhook's signing key, the
-- SMTP password) are sealed with the keyring into key_id, nonce and
-- ciphertext, bound to the row; settings holds only what people may see.
CREATE TABLE notification_destinations (
    id                   text PRIMARY KEY,
    team_id              text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name                 text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    kind                 text NOT NULL CHECK (kind IN ('webhook', 'slack', 'discord', 'email')),
    events               text[] NOT NULL DEFAULT '{}',
    unhealthy_minutes    integer NOT NULL DEFAULT 5 CHECK (unhealthy_minutes BETWEEN 1 AND 1440),
    settings             jsonb NOT NULL DEFAULT '{}',
    key_id               text NOT NULL,
    nonce                bytea NOT NULL,
    ciphertext           bytea NOT NULL,
    enabled              boolean NOT NULL DEFAULT true,
    consecutive_failures integer NOT NULL DEFAULT 0,
    last_error           text NOT NULL DEFAULT '' CHECK (length(last_error) <= 2000),
    last_attempt_at      timestamptz,
    last_success_at      timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team_id, name),
    UNIQUE (team_id, id)
);

-- One message to one destination. dedupe_key makes an event that is
-- emitted again (a retried transaction, a health check every 15 s) one
-- delivery; payload is the event, which holds no secret value.
CREATE TABLE notification_deliveries (
    id             text PRIMARY KEY,
    team_id        text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    destination_id text NOT NULL,
    event          text NOT NULL,
    dedupe_key     text NOT NULL CHECK (length(dedupe_key) BETWEEN 1 AND 500),
    payload        jsonb NOT NULL,
    status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts       integer NOT NULL DEFAULT 0,
    last_error     text NOT NULL DEFAULT '' CHECK (length(last_error) <= 2000),
    -- clock_timestamp: deliveries made in one transaction keep their order.
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    delivered_at   timestamptz,
    FOREIGN KEY (team_id, destination_id) REFERENCES notification_destinations (team_id, id) ON DELETE CASCADE,
    UNIQUE (destination_id, dedupe_key)
);
CREATE INDEX notification_deliveries_destination_idx ON notification_deliveries (team_id, destination_id, created_at DESC);
CREATE INDEX notification_deliveries_created_idx ON notification_deliveries (created_at);

-- A service that is not running as its deployment asks since
-- unhealthy_since; the row goes when it recovers.
CREATE TABLE service_health (
    team_id         text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    environment_id  text NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    service         text NOT NULL,
    unhealthy_since timestamptz NOT NULL,
    reason          text NOT NULL DEFAULT '' CHECK (length(reason) <= 2000),
    PRIMARY KEY (environment_id, service)
);
CREATE INDEX service_health_team_idx ON service_health (team_id, environment_id);
