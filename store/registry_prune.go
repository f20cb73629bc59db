package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// DuePruneMarks is the image cleanup's memory of the registry manifests
// ("repo@digest") it found unreferenced. Given this run's unreferenced
// manifests, it marks the new ones, forgets those no longer among them
// (referenced again, or gone), and returns those marked at least grace
// ago: the only ones the cleanup may delete. Installation-wide: the
// registry's repositories are not rows of any team.
func (s *Store) DuePruneMarks(ctx context.Context, unreferenced []string, grace time.Duration) ([]string, error) {
	const op = "due prune marks"
	if unreferenced == nil {
		unreferenced = []string{}
	}
	var due []string
	err := s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `DELETE FROM registry_prune_marks WHERE NOT (reference = ANY($1))`, unreferenced); err != nil {
			return wrap(op, err)
		}
		if _, err := tx.db.Exec(ctx, `
			INSERT INTO registry_prune_marks (reference) SELECT unnest($1::text[])
			ON CONFLICT (reference) DO NOTHING`, unreferenced); err != nil {
			return wrap(op, err)
		}
		rows, err := tx.db.Query(ctx, `
			SELECT reference FROM registry_prune_marks
			WHERE marked_at <= now() - make_interval(secs => $1) ORDER BY reference`, grace.Seconds())
		if err != nil {
			return wrap(op, err)
		}
		due, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return wrap(op, err)
	})
	return due, err
}
