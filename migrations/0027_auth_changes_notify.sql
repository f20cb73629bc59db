-- serve caches what a session cookie or an API token resolves to
-- (store/authcache). Every change that could alter that answer notifies the
-- slipway_auth channel, delivered when its transaction commits, and each
-- serve process drops its cache. Activity stamps do not notify: a session's
-- last_seen_at with a later (sliding) expiry, and a token's last_used_at.
CREATE FUNCTION slipway_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_LEVEL = 'ROW' AND TG_OP = 'UPDATE' THEN
        IF TG_TABLE_NAME = 'sessions' THEN
            IF NEW.expires_at >= OLD.expires_at
               AND to_jsonb(NEW) - 'last_seen_at' - 'expires_at' = to_jsonb(OLD) - 'last_seen_at' - 'expires_at' THEN
                RETURN NULL;
            END IF;
        ELSIF TG_TABLE_NAME = 'api_tokens' THEN
            IF to_jsonb(NEW) - 'last_used_at' = to_jsonb(OLD) - 'last_used_at' THEN
                RETURN NULL;
            END IF;
        END IF;
    END IF;
    PERFORM pg_notify('slipway_auth', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER sessions_auth_changed AFTER UPDATE OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION slipway_auth_changed();
CREATE TRIGGER users_auth_changed AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION slipway_auth_changed();
CREATE TRIGGER memberships_auth_changed AFTER INSERT OR UPDATE OR DELETE ON memberships
    FOR EACH ROW EXECUTE FUNCTION slipway_auth_changed();
CREATE TRIGGER teams_auth_changed AFTER UPDATE OR DELETE ON teams
    FOR EACH ROW EXECUTE FUNCTION slipway_auth_changed();
CREATE TRIGGER api_tokens_auth_changed AFTER UPDATE OR DELETE ON api_tokens
    FOR EACH ROW EXECUTE FUNCTION slipway_auth_changed();

CREATE TRIGGER sessions_auth_truncated AFTER TRUNCATE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION slipway_auth_changed();
CREATE TRIGGER users_auth_truncated AFTER TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION slipway_auth_changed();
CREATE TRIGGER memberships_auth_truncated AFTER TRUNCATE ON memberships
    FOR EACH STATEMENT EXECUTE FUNCTION slipway_auth_changed();
CREATE TRIGGER teams_auth_truncated AFTER TRUNCATE ON teams
    FOR EACH STATEMENT EXECUTE FUNCTION slipway_auth_changed();
CREATE TRIGGER api_tokens_auth_truncated AFTER TRUNCATE ON api_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION slipway_auth_changed();
