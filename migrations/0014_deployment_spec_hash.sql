-- The specification hash of what a deployment runs (manifest.SpecHash of
-- its rendered manifest and the repository files it mounts), recorded with
-- its capture: the identity plans, deployments and status compare. Empty
-- for deployments captured before it was recorded, and until capture.
ALTER TABLE deployments ADD COLUMN spec_hash text NOT NULL DEFAULT '';
