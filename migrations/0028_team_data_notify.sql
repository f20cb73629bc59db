-- serve keeps what the dashboard's applications list and Overview read of
-- a team (app/team_reads.go) between changes. Every change to the tables
-- those pages read notifies the slipway_team_data channel with the team's
-- id, delivered when its transaction commits, and each serve process drops
-- what it kept of that team. A user's name or e-mail can show in any team
-- (who deployed): their changes notify with an empty payload, for every
-- team. A token's last-use stamp shows on neither page and does not notify.
CREATE FUNCTION slipway_team_data_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    team text := '';
BEGIN
    IF TG_LEVEL = 'ROW' AND TG_TABLE_NAME <> 'users' THEN
        IF TG_OP = 'DELETE' THEN
            team := coalesce(OLD.team_id, '');
        ELSE
            IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'api_tokens'
               AND to_jsonb(NEW) - 'last_used_at' = to_jsonb(OLD) - 'last_used_at' THEN
                RETURN NULL;
            END IF;
            team := coalesce(NEW.team_id, '');
            IF TG_OP = 'UPDATE' AND coalesce(OLD.team_id, '') <> team THEN
                -- Moved between teams (a GitHub installation): both change.
                PERFORM pg_notify('slipway_team_data', coalesce(OLD.team_id, ''));
            END IF;
        END IF;
    END IF;
    PERFORM pg_notify('slipway_team_data', team);
    RETURN NULL;
END
$$;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['applications', 'environments', 'deployments', 'deployment_fetches',
        'deployment_refs', 'deployment_snapshots', 'memberships', 'api_tokens', 'deployed_routes',
        'route_certificates', 'github_installations']
    LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I
            FOR EACH ROW EXECUTE FUNCTION slipway_team_data_changed()', t || '_team_data_changed', t);
        EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I
            FOR EACH STATEMENT EXECUTE FUNCTION slipway_team_data_changed()', t || '_team_data_truncated', t);
    END LOOP;
END
$$;

CREATE TRIGGER users_team_data_changed AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION slipway_team_data_changed();
CREATE TRIGGER users_team_data_truncated AFTER TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION slipway_team_data_changed();
