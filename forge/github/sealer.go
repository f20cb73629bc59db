package github

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/store"
)

// Sealer encrypts secrets at rest; *keyring.Keyring implements it. ad
// binds a ciphertext to where it is stored, so one cannot be moved to
// another column.
type Sealer interface {
	Seal(plaintext, ad []byte) (keyring.Sealed, error)
	Open(s keyring.Sealed, ad []byte) ([]byte, error)
}

func appAD(appID int64, field string) []byte {
	return keyring.AD("github_app", strconv.FormatInt(appID, 10), field)
}

// pack stores a sealed value in one bytea column beside its key id: one
// byte of nonce length, the nonce, then the ciphertext.
func pack(s keyring.Sealed) []byte {
	out := make([]byte, 0, 1+len(s.Nonce)+len(s.Ciphertext))
	out = append(out, byte(len(s.Nonce)))
	out = append(out, s.Nonce...)
	return append(out, s.Ciphertext...)
}

func unpack(b []byte, keyID string) (keyring.Sealed, error) {
	if len(b) < 1 || len(b) < 1+int(b[0]) {
		return keyring.Sealed{}, errors.New("sealed value is truncated")
	}
	n := int(b[0])
	return keyring.Sealed{KeyID: keyID, Nonce: b[1 : 1+n], Ciphertext: b[1+n:]}, nil
}

func seal(s Sealer, appID int64, field, plaintext string) ([]byte, string, error) {
	sealed, err := s.Seal([]byte(plaintext), appAD(appID, field))
	if err != nil {
		return nil, "", fmt.Errorf("seal github %s: %w", field, err)
	}
	return pack(sealed), sealed.KeyID, nil
}

func open(s Sealer, appID int64, field string, b []byte, keyID string) ([]byte, error) {
	sealed, err := unpack(b, keyID)
	if err == nil {
		var pt []byte
		if pt, err = s.Open(sealed, appAD(appID, field)); err == nil {
			return pt, nil
		}
	}
	return nil, fmt.Errorf("open github %s: %w", field, err)
}

// SaveApp seals the App's secrets and stores its credentials (after the
// manifest flow, or credentials an installation owner entered).
func SaveApp(ctx context.Context, st *store.Store, s Sealer, c AppCredentials) (store.GitHubApp, error) {
	row := store.GitHubApp{AppID: c.AppID, Slug: c.Slug, Name: c.Name, ClientID: c.ClientID, HTMLURL: c.HTMLURL}
	var err error
	if row.PrivateKeySealed, row.PrivateKeyKeyID, err = seal(s, c.AppID, "private_key", c.PEM); err != nil {
		return store.GitHubApp{}, err
	}
	if row.WebhookSecretSealed, row.WebhookSecretKeyID, err = seal(s, c.AppID, "webhook_secret", c.WebhookSecret); err != nil {
		return store.GitHubApp{}, err
	}
	if c.ClientSecret != "" {
		if row.ClientSecretSealed, row.ClientSecretKeyID, err = seal(s, c.AppID, "client_secret", c.ClientSecret); err != nil {
			return store.GitHubApp{}, err
		}
	}
	return st.SaveGitHubApp(ctx, row)
}

// LoadConfig builds a Config from the stored App, opening its secrets;
// apiURL and webURL are the daemon's settings ("" for github.com).
// store.ErrNotFound means no App was registered.
func LoadConfig(ctx context.Context, st *store.Store, s Sealer, apiURL, webURL string) (Config, error) {
	a, err := st.GetGitHubApp(ctx)
	if err != nil {
		return Config{}, err
	}
	key, err := open(s, a.AppID, "private_key", a.PrivateKeySealed, a.PrivateKeyKeyID)
	if err != nil {
		return Config{}, err
	}
	secret, err := open(s, a.AppID, "webhook_secret", a.WebhookSecretSealed, a.WebhookSecretKeyID)
	if err != nil {
		return Config{}, err
	}
	return Config{APIURL: apiURL, WebURL: webURL, AppID: a.AppID, AppSlug: a.Slug, PrivateKey: key, WebhookSecret: secret}.normalize()
}
