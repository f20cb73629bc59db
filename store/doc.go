// Package store is Slipway's Postgres storage: one Store type over a pgx v5
// pool, one file per entity, hand-written SQL with explicit column lists.
// It knows Postgres, not Docker or HTTP: it must not import app,
// pipeline, jobs, runtime, views or forge.
//
// # Tenancy
//
// Every team-scoped method takes teamID right after ctx and every query it
// runs has team_id = $1 as its first WHERE term: an object of another team
// is ErrNotFound, exactly like a missing one. Users and sessions are keyed
// by user id and session id hash; the few lookups keyed by a secret
// (GetInvitationByToken, AcceptInvitation, AuthenticateAPIToken) find the
// team from the secret. Maintenance methods that span teams
// (DeleteExpiredSessions, PruneEvents) say so.
//
// # Errors
//
// ErrNotFound (never a nil error with a zero value), *ConflictError for
// unique violations (errors.Is(err, ErrConflict); Field and Code name what
// collided, e.g. Field "email", Code "email_taken"), ErrLastOwner,
// ErrInvitationExpired, ErrInvitationUsed, *InvalidError for a CHECK
// violation (errors.Is(err, ErrInvalid)), ErrAlreadyCaptured,
// ErrSchemaTooNew/ErrSchemaOutdated, *TransitionError for a refused
// deployment state change (errors.Is(err, ErrInvalidTransition)).
// Every error is wrapped with the operation name.
//
// # Transactions
//
//	err := st.WithTx(ctx, func(tx *store.Store) error {
//		app, err := tx.CreateApplication(ctx, teamID, name)
//		if err != nil {
//			return err
//		}
//		_, err = riverClient.InsertTx(ctx, tx.Tx(), SomeArgs{ID: app.ID}, nil)
//		return err
//	})
//
// WithTx inside WithTx is a savepoint. A statement that fails inside WithTx
// aborts that transaction: return the error (everything rolls back), or
// wrap the statement in a nested WithTx when a failure is expected and the
// transaction must go on. storetest.New gives tests a Store bound to a
// transaction that is rolled back on cleanup.
//
// # Identifiers
//
// Ids are text with a kind prefix (team_, usr_, inv_, tok_, app_, rev_,
// env_, dep_, …). The methods are listed by godoc (go doc store.Store).
package store
