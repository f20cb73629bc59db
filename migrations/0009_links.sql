-- Links between applications (exports and imports). Both tables are
-- derived from what environments deployed; the links_reconcile job keeps
-- them and Swarm in step.

-- The links that exist now: one overlay network each, joined by the
-- exported service of the exporting environment (answering to alias) and
-- every service of the importing environment. No foreign keys to
-- environments: a row outlives a deleted environment until the job has
-- removed its network. created_at orders the 64 slots of an exporter.
CREATE TABLE environment_links (
    team_id                  text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    exporter_environment_id  text NOT NULL,
    service                  text NOT NULL,
    importer_environment_id  text NOT NULL,
    alias                    text NOT NULL,
    network                  text NOT NULL,
    created_at               timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (team_id, exporter_environment_id, service, importer_environment_id)
);
CREATE INDEX environment_links_importer_idx ON environment_links (team_id, importer_environment_id);

-- The application each name an environment's deployment exports to or
-- imports from was bound to when that deployment was first linked ('' for
-- a name no application held: it matches whichever takes it).
CREATE TABLE link_bindings (
    team_id         text NOT NULL,
    environment_id  text NOT NULL,
    deployment_id   text NOT NULL,
    name            text NOT NULL,
    application_id  text NOT NULL DEFAULT '',
    PRIMARY KEY (team_id, environment_id, name),
    FOREIGN KEY (team_id, environment_id) REFERENCES environments (team_id, id) ON DELETE CASCADE
);
