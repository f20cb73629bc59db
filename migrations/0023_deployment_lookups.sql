-- The latest successful deployment of an environment (what runs, what a
-- rollback restores, what the Overview shows) and "did it ever succeed"
-- read one index entry instead of sorting the environment's history.
CREATE INDEX deployments_succeeded_idx ON deployments (team_id, environment_id, finished_at DESC, id DESC)
    WHERE state = 'succeeded';
