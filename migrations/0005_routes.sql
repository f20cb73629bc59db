-- The routes each environment serves now: what the last deployment that
-- activated its routes published. The gateway's table is every row here;
-- route_table_version is bumped in the same transaction as any change so
-- serve can tell a new table from the one it already published.
CREATE TABLE deployed_routes (
    team_id          text NOT NULL,
    application_id   text NOT NULL,
    environment_id   text NOT NULL,
    deployment_id    text NOT NULL,
    hostname         text PRIMARY KEY CHECK (
        hostname = lower(hostname) AND hostname !~ '\.$' AND length(hostname) BETWEEN 1 AND 253),
    wildcard         boolean NOT NULL GENERATED ALWAYS AS (hostname LIKE '*.%') STORED,
    visibility       text NOT NULL CHECK (visibility IN ('public', 'private')),
    -- The manifest's service name (for people) and its Swarm DNS name.
    service          text NOT NULL DEFAULT '',
    backend_service  text NOT NULL DEFAULT '',
    backend_port     integer NOT NULL DEFAULT 0 CHECK (backend_port BETWEEN 0 AND 65535),
    backend_network  text NOT NULL DEFAULT '',
    redirect_to      text NOT NULL DEFAULT '',
    redirect_status  integer NOT NULL DEFAULT 0,
    preserve_path    boolean NOT NULL DEFAULT false,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- Exactly one target: a backend or a redirect.
    CONSTRAINT deployed_routes_target_check CHECK (
        (backend_service <> '' AND backend_port > 0 AND redirect_to = '')
        OR (backend_service = '' AND redirect_to <> '')),
    CONSTRAINT deployed_routes_environment_fkey FOREIGN KEY (team_id, application_id, environment_id)
        REFERENCES environments (team_id, application_id, id) ON DELETE CASCADE
);
CREATE INDEX deployed_routes_environment_idx ON deployed_routes (team_id, environment_id);

-- One row: the route table's version. Only ever increases.
CREATE TABLE route_table_version (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version   bigint NOT NULL DEFAULT 0 CHECK (version >= 0)
);
INSERT INTO route_table_version (singleton, version) VALUES (true, 0);

-- Deleting an environment cascades its routes away; the version must move
-- then too, or the gateway would keep serving them. Per row, so statements
-- that touch no route (most environment deletions) never take the
-- version row's lock.
CREATE FUNCTION deployed_routes_bump_version() RETURNS trigger AS $$
BEGIN
    UPDATE route_table_version SET version = version + 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER deployed_routes_bump_version
    AFTER INSERT OR DELETE ON deployed_routes
    FOR EACH ROW EXECUTE FUNCTION deployed_routes_bump_version();
-- A redeploy rewrites its rows with a new deployment_id: only what the
-- gateway serves moves the version.
CREATE TRIGGER deployed_routes_bump_version_on_change
    AFTER UPDATE ON deployed_routes
    FOR EACH ROW
    WHEN ((OLD.hostname, OLD.environment_id, OLD.visibility, OLD.backend_service, OLD.backend_port,
           OLD.backend_network, OLD.redirect_to, OLD.redirect_status, OLD.preserve_path)
          IS DISTINCT FROM
          (NEW.hostname, NEW.environment_id, NEW.visibility, NEW.backend_service, NEW.backend_port,
           NEW.backend_network, NEW.redirect_to, NEW.redirect_status, NEW.preserve_path))
    EXECUTE FUNCTION deployed_routes_bump_version();
