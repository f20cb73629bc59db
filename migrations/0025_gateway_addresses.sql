-- Each gateway's address on each ingress overlay it is on, reported by the
-- agent that joined it there (slipway gateway-agent, one per ingress
-- node). Routed services on a network receive the addresses of its fresh
-- rows as SLIPWAY_INGRESS_PROXIES. A report replaces the gateway's rows.
CREATE TABLE gateway_addresses (
    gateway     text NOT NULL CHECK (length(gateway) BETWEEN 1 AND 253),
    network     text NOT NULL CHECK (length(network) BETWEEN 1 AND 255),
    address     inet NOT NULL,
    reported_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (gateway, network)
);
CREATE INDEX gateway_addresses_network ON gateway_addresses (network);
