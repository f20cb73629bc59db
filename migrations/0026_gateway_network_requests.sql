-- A deployment asks the gateways of the ingress nodes to join its
-- environment's ingress overlay before it creates the services routed
-- there, so that their first spec already holds every gateway's address
-- (SLIPWAY_INGRESS_PROXIES). The route table lists the networks of the
-- unexpired requests beside its routes' networks; a request ends when the
-- deployment sets its routes (they hold the network from then on), when
-- the environment's routes are withdrawn or it is deleted, or when it
-- expires (a deployment that failed before its routes). Changes bump the
-- route table version, as route changes do.
CREATE TABLE gateway_network_requests (
    team_id        text NOT NULL,
    environment_id text PRIMARY KEY,
    network        text NOT NULL CHECK (length(network) BETWEEN 1 AND 255),
    expires_at     timestamptz NOT NULL,
    CONSTRAINT gateway_network_requests_environment_fkey FOREIGN KEY (team_id, environment_id)
        REFERENCES environments (team_id, id) ON DELETE CASCADE
);
CREATE INDEX gateway_network_requests_expires ON gateway_network_requests (expires_at);

-- A renewed request moves the version too: serve reloads the table and
-- with it when the first request expires.
CREATE TRIGGER gateway_network_requests_bump_version
    AFTER INSERT OR UPDATE OR DELETE ON gateway_network_requests
    FOR EACH ROW EXECUTE FUNCTION deployed_routes_bump_version();
