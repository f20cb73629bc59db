package github

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// Install state errors. Each carries a snake_case code the setup callback
// can show; none of them binds anything.
var (
	ErrStateInvalid   = errors.New("install_state_invalid: the installation link is not one Slipway issued")
	ErrStateExpired   = errors.New("install_state_expired: the installation link expired; start again from Connect GitHub")
	ErrStateUsed      = errors.New("install_state_used: the installation link was used already; start again from Connect GitHub")
	ErrStateWrongUser = errors.New("install_state_wrong_user: the installation was started by another user")
)

// DefaultStateTTL is how long an install state is accepted.
const DefaultStateTTL = 10 * time.Minute

// stateDomain separates these MACs from anything else the daemon's key
// signs.
const stateDomain = "slipway/github-install-state/v1\x00"

// States issues and checks the signed install state that ties a GitHub
// installation to the team and user who started it.
type States struct {
	// Key is the daemon's secret key material (at least 32 bytes).
	Key []byte
	// TTL defaults to DefaultStateTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Installations, when set, is asked whether the installation exists
	// (and whose it is) before it is bound.
	Installations InstallationGetter
}

// InstallationGetter reads an installation as the App (*Client does).
type InstallationGetter interface {
	GetInstallation(ctx context.Context, installationID int64) (Installation, error)
}

// StateClaims is what a state says.
type StateClaims struct {
	TeamID    string    `json:"t"`
	UserID    string    `json:"u"`
	Nonce     []byte    `json:"n"`
	ExpiresAt time.Time `json:"-"`
	Expires   int64     `json:"e"`
}

func (s States) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s States) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte(stateDomain))
	m.Write(payload)
	return m.Sum(nil)
}

var b64 = base64.RawURLEncoding

// New issues a state for teamID and userID.
func (s States) New(teamID, userID string) (string, error) {
	if len(s.Key) < 32 {
		return "", errors.New("install state: key must be at least 32 bytes")
	}
	ttl := s.TTL
	if ttl <= 0 {
		ttl = DefaultStateTTL
	}
	c := StateClaims{TeamID: teamID, UserID: userID, Nonce: make([]byte, 16), Expires: s.now().Add(ttl).Unix()}
	if _, err := rand.Read(c.Nonce); err != nil {
		return "", fmt.Errorf("install state nonce: %w", err)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("install state: %w", err)
	}
	return b64.EncodeToString(payload) + "." + b64.EncodeToString(s.mac(payload)), nil
}

// Parse checks the state's signature and expiry (not its use).
func (s States) Parse(state string) (StateClaims, error) {
	if len(s.Key) < 32 || len(state) > 1024 {
		return StateClaims{}, ErrStateInvalid
	}
	p64, m64, ok := strings.Cut(state, ".")
	if !ok {
		return StateClaims{}, ErrStateInvalid
	}
	payload, err1 := b64.DecodeString(p64)
	mac, err2 := b64.DecodeString(m64)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(payload)) {
		return StateClaims{}, ErrStateInvalid
	}
	var c StateClaims
	if err := json.Unmarshal(payload, &c); err != nil || len(c.Nonce) != 16 || c.TeamID == "" || c.UserID == "" {
		return StateClaims{}, ErrStateInvalid
	}
	c.ExpiresAt = time.Unix(c.Expires, 0)
	if !s.now().Before(c.ExpiresAt) {
		return StateClaims{}, ErrStateExpired
	}
	return c, nil
}

// Verify checks the state for currentUserID and consumes its nonce in st
// (run it in the transaction that acts on it).
func (s States) Verify(ctx context.Context, st *store.Store, state, currentUserID string) (StateClaims, error) {
	c, err := s.Parse(state)
	if err != nil {
		return StateClaims{}, err
	}
	if !hmac.Equal([]byte(c.UserID), []byte(currentUserID)) {
		return StateClaims{}, ErrStateWrongUser
	}
	if err := st.UseGitHubInstallState(ctx, c.TeamID, c.Nonce, c.UserID, c.ExpiresAt); err != nil {
		if errors.Is(err, store.ErrInstallStateUsed) {
			return StateClaims{}, ErrStateUsed
		}
		return StateClaims{}, err
	}
	return c, nil
}

// BindInstallation is the setup callback's work: it verifies state for the
// logged-in user, checks the user still belongs to the team, and binds the
// installation to the team, all in one transaction, so any failure binds
// nothing and leaves the state unused.
func (s States) BindInstallation(ctx context.Context, st *store.Store, state string, installationID int64, currentUserID string) error {
	if installationID <= 0 {
		return errors.New("installation_id_invalid: installation_id must be a positive integer")
	}
	var info Installation
	if s.Installations != nil {
		var err error
		if info, err = s.Installations.GetInstallation(ctx, installationID); err != nil {
			return fmt.Errorf("installation_unknown: installation %d: %w", installationID, err)
		}
	}
	return st.WithTx(ctx, func(tx *store.Store) error {
		c, err := s.Verify(ctx, tx, state, currentUserID)
		if err != nil {
			return err
		}
		if _, err := tx.GetMember(ctx, c.TeamID, c.UserID); err != nil {
			return fmt.Errorf("bind installation: %w", err)
		}
		if info.ID != 0 {
			if _, err := tx.UpsertGitHubInstallation(ctx, installationID, info.AccountLogin, info.AccountType); err != nil {
				return err
			}
		}
		if _, err := tx.BindGitHubInstallation(ctx, c.TeamID, installationID, c.UserID); err != nil {
			return err
		}
		_, err = tx.RecordEvent(ctx, c.TeamID, store.EventParams{
			Actor: "user:" + c.UserID, Verb: "github.installation_bound", ObjectType: "github_installation",
			ObjectID: fmt.Sprint(installationID), Details: map[string]any{"account": info.AccountLogin},
		})
		return err
	})
}
