-- Telemetry grants: an environment granted telemetry mounts the daemon's
-- socket directory into its receives_telemetry service. Off by default;
-- previews are never granted.
ALTER TABLE environments ADD COLUMN telemetry_granted boolean NOT NULL DEFAULT false;
