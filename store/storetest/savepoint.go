package storetest

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// savepointDB runs each statement in its own savepoint of tx. A failed
// statement in Postgres aborts its whole transaction; with a savepoint per
// statement, a Store bound to a long-lived transaction (a test's, which is
// rolled back at the end) behaves like one on a pool: an expected conflict
// leaves the transaction usable.
type savepointDB struct {
	tx pgx.Tx
}

func (d savepointDB) Begin(ctx context.Context) (pgx.Tx, error) { return d.tx.Begin(ctx) }

func (d savepointDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	sp, err := d.tx.Begin(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := sp.Exec(ctx, sql, args...)
	return tag, finish(ctx, sp, err)
}

func (d savepointDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	sp, err := d.tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := sp.Query(ctx, sql, args...)
	if err != nil {
		return nil, finish(ctx, sp, err)
	}
	return &savepointRows{Rows: rows, sp: sp, ctx: ctx}, nil
}

func (d savepointDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	sp, err := d.tx.Begin(ctx)
	if err != nil {
		return errRow{err}
	}
	return savepointRow{row: sp.QueryRow(ctx, sql, args...), sp: sp, ctx: ctx}
}

// finish releases the savepoint after success and rolls back to it after a
// failure, returning the statement's error (or the release's).
func finish(ctx context.Context, sp pgx.Tx, err error) error {
	if err != nil {
		_ = sp.Rollback(ctx)
		return err
	}
	return sp.Commit(ctx)
}

type savepointRow struct {
	row pgx.Row
	sp  pgx.Tx
	ctx context.Context
}

func (r savepointRow) Scan(dest ...any) error {
	return finish(r.ctx, r.sp, r.row.Scan(dest...))
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// savepointRows ends its savepoint when closed; every reader in package
// store closes its rows (CollectRows does).
type savepointRows struct {
	pgx.Rows
	sp     pgx.Tx
	ctx    context.Context
	closed bool
	err    error
}

func (r *savepointRows) Close() {
	r.Rows.Close()
	if r.closed {
		return
	}
	r.closed = true
	r.err = finish(r.ctx, r.sp, r.Rows.Err())
}

func (r *savepointRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.Rows.Err()
}
