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
	if err := checkNewPassword(pw); err != nil {
		return "", err
	}
	return auth.HashPassword(p, pw)
}

func checkNewPassword(pw string) error {
	if err := auth.CheckPassword(pw); err != nil {
		var pe *auth.PasswordError
		errors.As(err, &pe)
		return &InputError{Field: "password", Code: pe.Code, Message: pe.Message}
	}
	return nil
}

// SignupRequest creates a user who owns a new team.
type SignupRequest struct {
	Email    string
	Password string
	TeamName string
	// FirstRun makes the sign-up fail with ErrSetupDone once any user
	// exists, atomically with the check, and requires SetupToken.
	FirstRun bool
	// SetupToken is the installation's one-time setup token (see
	// IssueSetupToken); a first-run sign-up without the right one fails
	// with setup_token_invalid on the field "token".
	SetupToken string
}

// CodeSetupTokenInvalid is the first-run form's error for a missing or
// wrong setup token.
const CodeSetupTokenInvalid = "setup_token_invalid"

// CheckSignup validates a sign-up's fields without touching the store.
func CheckSignup(r SignupRequest) error {
	if _, err := CheckEmail(r.Email); err != nil {
		return err
	}
	if _, err := CheckTeamName(r.TeamName); err != nil {
		return err
	}
	return checkNewPassword(r.Password)
}

// Signup creates the user, the team and the owner membership, all or
// nothing. A first run also consumes the setup token.
func Signup(ctx context.Context, st *store.Store, p auth.Argon2Params, r SignupRequest) (store.User, store.Team, error) {
	return signup(ctx, st, p, r, func(tx *store.Store) error {
		if !r.FirstRun {
			return nil
		}
		n, err := tx.CountUsers(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			return ErrSetupDone
		}
		ok, err := tx.SetupTokenMatches(ctx, store.HashToken(strings.TrimSpace(r.SetupToken)))
		if err != nil {
			return err
		}
		if !ok {
			return &InputError{Field: "token", Code: CodeSetupTokenInvalid, Message: CodeSetupTokenInvalid + ": this is not the installation's setup token: copy it from the serve log or the setup-token file in its data directory"}
		}
		return nil
	})
}

// CreateOwner is the operator's way in (slipway admin create-owner): a
// user owning a new team, made directly in the database, with no setup
// token. Once it exists the setup token no longer works.
func CreateOwner(ctx context.Context, st *store.Store, p auth.Argon2Params, r SignupRequest) (store.User, store.Team, error) {
	r.FirstRun = false
	return signup(ctx, st, p, r, func(*store.Store) error { return nil })
}

// signup creates the user and team after check passed, under the
// first-run lock, and retires the setup token: an owner exists now.
func signup(ctx context.Context, st *store.Store, p auth.Argon2Params, r SignupRequest, check func(tx *store.Store) error) (store.User, store.Team, error) {
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
		if err := tx.LockFirstRun(ctx); err != nil {
			return err
		}
		if err := check(tx); err != nil {
			return err
		}
		var err error
		if u, err = tx.CreateUser(ctx, email, "", hash); err != nil {
			return conflictInput(err, "an account with this e-mail address already exists")
		}
		if t, err = createTeam(ctx, tx, u.ID, teamName); err != nil {
			return err
		}
		return tx.DeleteSetupToken(ctx)
	})
	return u, t, err
}

// IssueSetupToken makes the one-time setup token of an installation with
// no users: it returns the new token when this call stored it, "" when
// users exist or a token was issued before (by this or another serve
// process; only its hash is stored, so it cannot be shown again).
func IssueSetupToken(ctx context.Context, st *store.Store) (string, error) {
	var token string
	err := st.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.LockFirstRun(ctx); err != nil {
			return err
		}
		n, err := tx.CountUsers(ctx)
		if err != nil || n > 0 {
			return err
		}
		t := auth.NewSecret(auth.SetupPrefix)
		issued, err := tx.IssueSetupToken(ctx, store.HashToken(t))
		if issued {
			token = t
		}
		return err
	})
	return token, err
}

// SetupTokenValid says whether token is the stored setup token.
func SetupTokenValid(ctx context.Context, st *store.Store, token string) (bool, error) {
	return st.SetupTokenMatches(ctx, store.HashToken(strings.TrimSpace(token)))
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
