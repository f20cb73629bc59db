-- Previews: a preview of an untrusted pull request (from a fork) never
-- mounts a stored secret, whatever the secret's access list says. A
-- preview being deleted keeps its row until the worker has removed
-- everything it ran and checked that no volume is left.
ALTER TABLE environments
    ADD COLUMN untrusted   boolean NOT NULL DEFAULT false,
    ADD COLUMN deleting_at timestamptz,
    ADD CONSTRAINT environments_untrusted_preview_check CHECK (NOT untrusted OR kind = 'preview');

-- Every volume a preview's deployments created, including volumes a later
-- manifest dropped, so deleting the preview can check each one is gone.
CREATE TABLE preview_volumes (
    team_id        text NOT NULL,
    environment_id text NOT NULL,
    name           text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment_id, name),
    CONSTRAINT preview_volumes_environment_fkey FOREIGN KEY (team_id, environment_id)
        REFERENCES environments (team_id, id) ON DELETE CASCADE
);
