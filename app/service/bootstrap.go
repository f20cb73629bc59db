package service

import (
	"context"
	"errors"
	"time"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store"
)

// The identity `slipway dev --bootstrap-token-file` provisions.
const (
	BootstrapEmail    = "dev@localhost"
	BootstrapTeamSlug = "dev"
)

// Bootstrapped is what Bootstrap made.
type Bootstrapped struct {
	User  store.User
	Team  store.Team
	Token string // the new API token's secret, with every scope
	// Password is set only when the user was created just now: it is
	// printed once so the developer can also log in to the dashboard.
	Password string
}

// Bootstrap makes sure team "dev" and its owner dev@localhost exist, and
// creates a fresh all-scope API token for scripts and end-to-end tests.
// Running it again reuses the user and team.
func Bootstrap(ctx context.Context, st *store.Store, p auth.Argon2Params, now time.Time) (Bootstrapped, error) {
	var out Bootstrapped
	err := st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		out.User, err = tx.GetUserByEmail(ctx, BootstrapEmail)
		if errors.Is(err, store.ErrNotFound) {
			out.Password = auth.NewSecret("")[:24]
			hash, herr := auth.HashPassword(p, out.Password)
			if herr != nil {
				return herr
			}
			out.User, err = tx.CreateUser(ctx, BootstrapEmail, "Developer", hash)
		}
		if err != nil {
			return err
		}
		out.Team, err = tx.GetTeamBySlug(ctx, BootstrapTeamSlug)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if out.Team, err = tx.CreateTeam(ctx, "dev", BootstrapTeamSlug); err != nil {
				return err
			}
			fallthrough
		case err == nil:
			if _, merr := tx.GetMember(ctx, out.Team.ID, out.User.ID); errors.Is(merr, store.ErrNotFound) {
				if err := tx.AddMember(ctx, out.Team.ID, out.User.ID, store.RoleOwner); err != nil {
					return err
				}
			} else if merr != nil {
				return merr
			}
		default:
			return err
		}
		return nil
	})
	if err != nil {
		return Bootstrapped{}, err
	}
	m, err := st.GetMember(ctx, out.Team.ID, out.User.ID)
	if err != nil {
		return Bootstrapped{}, err
	}
	actor := Actor{TeamID: out.Team.ID, UserID: out.User.ID, Scopes: auth.ScopesOf(auth.Role(m.Role))}
	_, out.Token, err = CreateToken(ctx, st, actor, TokenRequest{Name: "bootstrap (slipway dev)", Scopes: auth.Strings(actor.Scopes)}, now)
	return out, err
}
