-- Local previews (slipway preview deploy --local): the snapshot bundle a
-- deployment deploys, with the snapshot commit and the base commit (HEAD
-- of the worktree) it was taken on. The bundle stays as long as the
-- deployment, so restores and rebuilds read the same objects.
CREATE TABLE deployment_snapshots (
    deployment_id text PRIMARY KEY REFERENCES deployments (id) ON DELETE CASCADE,
    team_id       text NOT NULL,
    commit        text NOT NULL,
    base          text NOT NULL,
    bundle        bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deployment_snapshots_team ON deployment_snapshots (team_id);
