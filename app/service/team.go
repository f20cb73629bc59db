package service

import (
	"context"
	"crypto/rand"
	"errors"
	"net/mail"
	"strings"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store"
)

// ErrSetupDone is returned by Signup with FirstRun when a user exists.
var ErrSetupDone = errors.New("setup_done: this installation already has users; log in instead")

// CheckEmail validates and normalizes an e-mail address.
func CheckEmail(email string) (string, error) {
	email = strings.TrimSpace(email)
	if err := CheckCharacters("email", "e-mail address", email); err != nil {
		return "", err
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 {
		return "", &InputError{Field: "email", Code: "email_invalid", Message: "enter an e-mail address like name@example.com"}
	}
	return email, nil
}

// CheckTeamName validates a team's display name.
func CheckTeamName(name string) (string, error) {
	return CheckText("team", "team_name_invalid", "team name", name, 100)
}

// HashNewPassword checks the password rules and hashes it.
func HashNewPassword(p auth.Argon2Params, pw string) (string, error) {
	if err := auth.CheckPassword(pw); err != nil {
		var pe *auth.PasswordError
		errors.As(err, &pe)
		return "", &InputError{Field: "password", Code: pe.Code, Message: pe.Message}
	}
	return auth.HashPassword(p, pw)
}

// SignupRequest creates a user who owns a new team.
type SignupRequest struct {
	Email    string
	Password string
	TeamName string
	// FirstRun makes the sign-up fail with ErrSetupDone once any user
	// exists, atomically with the check.
	FirstRun bool
}

// Signup creates the user, the team and the owner membership, all or nothing.
func Signup(ctx context.Context, st *store.Store, p auth.Argon2Params, r SignupRequest) (store.User, store.Team, error) {
	email, err := CheckEmail(r.Email)
	if err != nil {
		return store.User{}, store.Team{}, err
	}
	teamName, err := CheckTeamName(r.TeamName)
	if err != nil {
		return store.User{}, store.Team{}, err
	}
	hash, err := HashNewPassword(p, r.Password)
	if err != nil {
		return store.User{}, store.Team{}, err
	}
	var u store.User
	var t store.Team
	err = st.WithTx(ctx, func(tx *store.Store) error {
		if r.FirstRun {
			if err := tx.LockFirstRun(ctx); err != nil {
				return err
			}
			n, err := tx.CountUsers(ctx)
			if err != nil {
				return err
			}
			if n > 0 {
				return ErrSetupDone
			}
		}
		var err error
		if u, err = tx.CreateUser(ctx, email, "", hash); err != nil {
			return conflictInput(err, "an account with this e-mail address already exists")
		}
		t, err = createTeam(ctx, tx, u.ID, teamName)
		return err
	})
	return u, t, err
}

// CreateTeam creates a team owned by userID.
func CreateTeam(ctx context.Context, st *store.Store, userID, name string) (store.Team, error) {
	name, err := CheckTeamName(name)
	if err != nil {
		return store.Team{}, err
	}
	var t store.Team
	err = st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		t, err = createTeam(ctx, tx, userID, name)
		return err
	})
	return t, err
}

func createTeam(ctx context.Context, tx *store.Store, userID, name string) (store.Team, error) {
	base := Slug(name)
	slug := base
	var t store.Team
	// A slug is only a readable handle, so a taken one gets a random suffix
	// rather than failing the sign-up.
	for attempt := 0; ; attempt++ {
		err := tx.WithTx(ctx, func(sp *store.Store) error {
			var err error
			t, err = sp.CreateTeam(ctx, name, slug)
			return err
		})
		if err == nil {
			break
		}
		var c *store.ConflictError
		if !errors.As(err, &c) || attempt == 5 {
			return store.Team{}, err
		}
		slug = trimSlug(base, 56) + "-" + randomSuffix()
	}
	if err := tx.AddMember(ctx, t.ID, userID, store.RoleOwner); err != nil {
		return store.Team{}, err
	}
	_, err := tx.RecordEvent(ctx, t.ID, store.EventParams{Actor: "user:" + userID, Verb: "team.create", ObjectType: "team", ObjectID: t.ID, Details: map[string]any{"name": name}})
	return t, err
}

// Slug derives a team slug from its name: lowercase letters, digits, dashes.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(trimSlug(b.String(), 63), "-")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = trimSlug("t-"+s, 63)
	}
	return strings.TrimRight(s, "-")
}

func trimSlug(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.TrimRight(s, "-")
}

func randomSuffix() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}
