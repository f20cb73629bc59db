-- The node each environment volume lives on. Named volumes are local to
-- a node: the node is recorded when the volume is first created, and the
-- services and jobs mounting it are pinned there, so a drained or failed
-- node stops them (volume_node_unavailable) instead of starting them
-- elsewhere on an empty volume.
CREATE TABLE volume_nodes (
    team_id        text NOT NULL,
    environment_id text NOT NULL,
    volume         text NOT NULL,
    node_id        text NOT NULL,
    node_name      text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, environment_id, volume),
    FOREIGN KEY (team_id, environment_id) REFERENCES environments (team_id, id) ON DELETE CASCADE
);
