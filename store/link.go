package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// linksLockKey (with the team id) serializes link reconciliations of a team.
const linksLockKey = 0x736c_6970_0009

// EnvironmentLink is a link that exists: the exported service of the
// exporting environment and every service of the importing environment
// share Network, on which the exported service answers to Alias.
type EnvironmentLink struct {
	TeamID                string
	ExporterEnvironmentID string
	Service               string
	ImporterEnvironmentID string
	Alias                 string
	Network               string
	CreatedAt             time.Time
}

// LinkEnvironment is one environment or preview of a live application with
// what its running deployment rendered (nil when nothing succeeded yet).
type LinkEnvironment struct {
	ID              string
	Name            string
	Kind            EnvironmentKind
	ApplicationID   string
	ApplicationName string
	DeploymentID    string
	Rendered        json.RawMessage
}

// LinkBindings are the application ids the names of one deployment's
// exports and imports were bound to ("" for a name no application held).
type LinkBindings struct {
	DeploymentID string
	Names        map[string]string
}

// LockLinks takes the team's link lock until the transaction ends, so two
// reconciliations never create the same network twice. Call it in WithTx.
func (s *Store) LockLinks(ctx context.Context, teamID string) error {
	_, err := s.db.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(linksLockKey&0x7fffffff), teamID)
	return wrap("lock links", err)
}

// ListLinkEnvironments returns the environments and previews of the team's
// live applications, each with its latest successful deployment: what it
// runs, and so what it exports and imports.
func (s *Store) ListLinkEnvironments(ctx context.Context, teamID string) ([]LinkEnvironment, error) {
	rows, err := s.db.Query(ctx, `
		SELECT e.id, e.name, e.kind, a.id, a.name, coalesce(d.id, ''), d.rendered_manifest
		FROM environments e
		JOIN applications a ON a.team_id = e.team_id AND a.id = e.application_id AND a.deleted_at IS NULL
		LEFT JOIN LATERAL (
			SELECT id, rendered_manifest FROM deployments
			WHERE team_id = e.team_id AND environment_id = e.id AND state = 'succeeded'
			ORDER BY finished_at DESC, id DESC LIMIT 1
		) d ON true
		WHERE e.team_id = $1
		ORDER BY e.created_at, e.id`, teamID)
	if err != nil {
		return nil, wrap("list link environments", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LinkEnvironment, error) {
		var e LinkEnvironment
		err := r.Scan(&e.ID, &e.Name, &e.Kind, &e.ApplicationID, &e.ApplicationName, &e.DeploymentID, &e.Rendered)
		return e, err
	})
	return out, wrap("list link environments", err)
}

const environmentLinkColumns = `team_id, exporter_environment_id, service, importer_environment_id, alias, network, created_at`

func scanEnvironmentLink(row pgx.Row) (EnvironmentLink, error) {
	var l EnvironmentLink
	err := row.Scan(&l.TeamID, &l.ExporterEnvironmentID, &l.Service, &l.ImporterEnvironmentID, &l.Alias, &l.Network, &l.CreatedAt)
	return l, err
}

// ListEnvironmentLinks returns the team's links, oldest first.
func (s *Store) ListEnvironmentLinks(ctx context.Context, teamID string) ([]EnvironmentLink, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+environmentLinkColumns+` FROM environment_links
		WHERE team_id = $1
		ORDER BY created_at, exporter_environment_id, service, importer_environment_id`, teamID)
	if err != nil {
		return nil, wrap("list environment links", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (EnvironmentLink, error) { return scanEnvironmentLink(r) })
	return out, wrap("list environment links", err)
}

// ListLinksOf returns the links an environment takes part in, as importer
// or exporter, oldest first.
func (s *Store) ListLinksOf(ctx context.Context, teamID, environmentID string) ([]EnvironmentLink, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+environmentLinkColumns+` FROM environment_links
		WHERE team_id = $1 AND (importer_environment_id = $2 OR exporter_environment_id = $2)
		ORDER BY created_at, exporter_environment_id, service, importer_environment_id`, teamID, environmentID)
	if err != nil {
		return nil, wrap("list links of environment", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (EnvironmentLink, error) { return scanEnvironmentLink(r) })
	return out, wrap("list links of environment", err)
}

// SaveEnvironmentLink records a link, or updates its alias and network.
func (s *Store) SaveEnvironmentLink(ctx context.Context, teamID string, l EnvironmentLink) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO environment_links (team_id, exporter_environment_id, service, importer_environment_id, alias, network)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (team_id, exporter_environment_id, service, importer_environment_id)
		DO UPDATE SET alias = excluded.alias, network = excluded.network`,
		teamID, l.ExporterEnvironmentID, l.Service, l.ImporterEnvironmentID, l.Alias, l.Network)
	return wrap("save environment link", err)
}

// DeleteEnvironmentLink forgets a link whose network is gone.
func (s *Store) DeleteEnvironmentLink(ctx context.Context, teamID, exporterEnvironmentID, service, importerEnvironmentID string) error {
	_, err := s.db.Exec(ctx, `
		DELETE FROM environment_links
		WHERE team_id = $1 AND exporter_environment_id = $2 AND service = $3 AND importer_environment_id = $4`,
		teamID, exporterEnvironmentID, service, importerEnvironmentID)
	return wrap("delete environment link", err)
}

// ListLinkBindings returns every environment's bindings, by environment id.
func (s *Store) ListLinkBindings(ctx context.Context, teamID string) (map[string]LinkBindings, error) {
	rows, err := s.db.Query(ctx, `
		SELECT environment_id, deployment_id, name, application_id FROM link_bindings
		WHERE team_id = $1`, teamID)
	if err != nil {
		return nil, wrap("list link bindings", err)
	}
	defer rows.Close()
	out := map[string]LinkBindings{}
	for rows.Next() {
		var env, dep, name, app string
		if err := rows.Scan(&env, &dep, &name, &app); err != nil {
			return nil, wrap("list link bindings", err)
		}
		b, ok := out[env]
		if !ok {
			b = LinkBindings{DeploymentID: dep, Names: map[string]string{}}
		}
		b.Names[name] = app
		out[env] = b
	}
	return out, wrap("list link bindings", rows.Err())
}

// ReplaceLinkBindings records the bindings of an environment's deployment,
// replacing those of its earlier deployment.
func (s *Store) ReplaceLinkBindings(ctx context.Context, teamID, environmentID string, b LinkBindings) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `DELETE FROM link_bindings WHERE team_id = $1 AND environment_id = $2`, teamID, environmentID); err != nil {
			return wrap("replace link bindings", err)
		}
		// A deployment that uses no name still records that it was bound.
		names := b.Names
		if len(names) == 0 {
			names = map[string]string{"": ""}
		}
		for name, app := range names {
			if _, err := tx.db.Exec(ctx, `
				INSERT INTO link_bindings (team_id, environment_id, deployment_id, name, application_id)
				VALUES ($1, $2, $3, $4, $5)`, teamID, environmentID, b.DeploymentID, name, app); err != nil {
				return wrap("replace link bindings", err)
			}
		}
		return nil
	})
}
