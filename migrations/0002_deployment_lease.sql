-- A worker holds a lease on the deployment it advances and renews it while
-- it works; an expired lease means the worker died and the deployment is
-- resumed by another (jobs: deployment_resume).
ALTER TABLE deployments
    ADD COLUMN lease_owner      text,
    ADD COLUMN lease_expires_at timestamptz,
    ADD COLUMN resumes          integer NOT NULL DEFAULT 0;

CREATE INDEX deployments_orphaned_idx ON deployments (lease_expires_at)
    WHERE lease_owner IS NOT NULL
      AND state IN ('capturing', 'preparing', 'running_jobs', 'rolling_out');
