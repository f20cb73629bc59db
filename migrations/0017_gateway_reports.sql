-- What each gateway last reported serving: the route table version, and
-- the hostnames of that version it can serve (a redirect at once, a route
-- once its backend accepted a connection). A deployment's routes step
-- waits on it before it reports the routes live. One row per gateway,
-- named by the gateway itself (its container's name, or its host name);
-- rows of gateways that stopped reporting are ignored once stale.
CREATE TABLE gateway_reports (
    gateway       text PRIMARY KEY CHECK (length(gateway) BETWEEN 1 AND 253),
    table_version bigint NOT NULL,
    live          text[] NOT NULL DEFAULT '{}',
    reported_at   timestamptz NOT NULL DEFAULT now()
);
