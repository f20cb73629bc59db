package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Team is the tenant: every row a user can see belongs to exactly one team.
type Team struct {
	ID        string
	Name      string
	Slug      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

const teamColumns = `id, name, slug, created_at, updated_at`

func scanTeam(row pgx.Row) (Team, error) {
	var t Team
	err := row.Scan(&t.ID, &t.Name, &t.Slug, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

// CreateTeam creates a team. It is not team-scoped: the team does not exist
// yet. Pair it with AddMember (owner) in one WithTx.
func (s *Store) CreateTeam(ctx context.Context, name, slug string) (Team, error) {
	t, err := scanTeam(s.db.QueryRow(ctx, `
		INSERT INTO teams (id, name, slug) VALUES ($1, $2, $3)
		RETURNING `+teamColumns, newID("team"), name, slug))
	return t, wrap("create team", err)
}

// GetTeam returns the team.
func (s *Store) GetTeam(ctx context.Context, teamID string) (Team, error) {
	t, err := scanTeam(s.db.QueryRow(ctx, `
		SELECT `+teamColumns+` FROM teams WHERE id = $1`, teamID))
	return t, wrap("get team", err)
}

// GetTeamBySlug returns the team with that slug. It is for bootstrap and
// sign-up flows that name a team before anyone is a member of it.
func (s *Store) GetTeamBySlug(ctx context.Context, slug string) (Team, error) {
	t, err := scanTeam(s.db.QueryRow(ctx, `
		SELECT `+teamColumns+` FROM teams WHERE slug = $1`, slug))
	return t, wrap("get team by slug", err)
}

// RenameTeam changes the team's display name.
func (s *Store) RenameTeam(ctx context.Context, teamID, name string) (Team, error) {
	t, err := scanTeam(s.db.QueryRow(ctx, `
		UPDATE teams SET name = $2, updated_at = now() WHERE id = $1
		RETURNING `+teamColumns, teamID, name))
	return t, wrap("rename team", err)
}

// DeleteTeam deletes the team and, by cascade, everything it owns.
func (s *Store) DeleteTeam(ctx context.Context, teamID string) error {
	return s.execOne(ctx, "delete team", `DELETE FROM teams WHERE id = $1`, teamID)
}
