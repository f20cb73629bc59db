-- The certificate state of each routed hostname, as the gateway last
-- reported it (it runs certmagic in its own container, so only it knows).
-- team_id is the team whose route the hostname was when reported; reads
-- join on it, so a hostname that changed hands shows nothing stale.
CREATE TABLE route_certificates (
    hostname    text PRIMARY KEY CHECK (
        hostname = lower(hostname) AND hostname !~ '\.$' AND length(hostname) BETWEEN 1 AND 253),
    team_id     text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    state       text NOT NULL CHECK (state IN ('none', 'pending', 'issued', 'failed', 'operator', 'internal')),
    expires_at  timestamptz,
    last_error  text NOT NULL DEFAULT '' CHECK (length(last_error) <= 2000),
    reported_at timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX route_certificates_team_idx ON route_certificates (team_id, hostname);
