-- The one-time setup token of a fresh installation: serve issues it on its
-- first start with no users, prints it once and writes it to a file; the
-- first-run form must present it. Only its SHA-256 is stored. At most one
-- row; it is deleted when the first owner is created.
CREATE TABLE setup_token (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    token_hash bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
