-- Installation admins: the users who see (and answer for) the machines
-- Slipway runs on, across every team: the Swarm's nodes in the API, the
-- CLI and the dashboard. Team roles do not reach that far: teams are
-- strangers to each other. The installation's first user is one; an
-- operator grants or revokes it with `slipway admin installation-admin`.
ALTER TABLE users ADD COLUMN installation_admin boolean NOT NULL DEFAULT false;
UPDATE users SET installation_admin = true
WHERE id = (SELECT id FROM users ORDER BY created_at, id LIMIT 1);
