-- Deployments are listed newest first as ORDER BY created_at DESC, id DESC.
-- With id in the indexes, an environment's (or application's) latest
-- deployment is one index entry instead of a sort of its whole history.
CREATE INDEX deployments_environment_latest_idx ON deployments (team_id, environment_id, created_at DESC, id DESC);
DROP INDEX deployments_environment_idx;
CREATE INDEX deployments_application_latest_idx ON deployments (team_id, application_id, created_at DESC, id DESC);
DROP INDEX deployments_application_idx;

-- The latest successful deployment of an environment (what runs, what a
-- rollback restores, what the Overview shows) and "did it ever succeed"
-- read one index entry too.
CREATE INDEX deployments_succeeded_idx ON deployments (team_id, environment_id, finished_at DESC, id DESC)
    WHERE state = 'succeeded';
