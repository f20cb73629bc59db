package notify

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/store"
)

// ErrUnavailable is returned when the service has no key to seal with.
var ErrUnavailable = errors.New("notifications_unavailable: the server has no secret key to seal destination credentials")

// Service manages a team's destinations. Every method takes the team id
// first; a destination of another team is store.ErrNotFound.
type Service struct {
	Store   *store.Store
	Keyring *keyring.Keyring
	Emitter *Emitter
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// WithStore returns the service running on st (a transaction's Store).
func (s *Service) WithStore(st *store.Store) *Service {
	c := *s
	c.Store = st
	return &c
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// ad binds a destination's credentials to its row.
func ad(teamID, destinationID string) []byte {
	return keyring.AD("notification-destination", teamID, destinationID)
}

func (s *Service) sealer(teamID string, c credentials) func(string) (store.Sealed, error) {
	return func(id string) (store.Sealed, error) {
		b, err := json.Marshal(c)
		if err != nil {
			return store.Sealed{}, err
		}
		sl, err := s.Keyring.Seal(b, ad(teamID, id))
		if err != nil {
			return store.Sealed{}, err
		}
		return store.Sealed{KeyID: sl.KeyID, Nonce: sl.Nonce, Ciphertext: sl.Ciphertext}, nil
	}
}

// open reads a destination's credentials.
func (s *Service) open(ctx context.Context, teamID, id string) (credentials, error) {
	if s.Keyring == nil {
		return credentials{}, ErrUnavailable
	}
	sl, err := s.Store.NotificationSealed(ctx, teamID, id)
	if err != nil {
		return credentials{}, err
	}
	b, err := s.Keyring.Open(keyring.Sealed{KeyID: sl.KeyID, Nonce: sl.Nonce, Ciphertext: sl.Ciphertext}, ad(teamID, id))
	if err != nil {
		return credentials{}, fmt.Errorf("open destination %s credentials: %w", id, err)
	}
	var c credentials
	if err := json.Unmarshal(b, &c); err != nil {
		return credentials{}, fmt.Errorf("open destination %s credentials: %w", id, err)
	}
	return c, nil
}

func params(r resolved) (store.NotificationDestinationParams, error) {
	settings, err := json.Marshal(r.settings)
	if err != nil {
		return store.NotificationDestinationParams{}, err
	}
	return store.NotificationDestinationParams{
		Name: r.name, Kind: r.kind, Events: r.events, UnhealthyMinutes: r.minutes, Settings: settings, Enabled: r.enabled,
	}, nil
}

// Create stores a new destination. A generic webhook created without a
// signing secret gets a generated one, returned here once (as an API
// token is) and never again.
func (s *Service) Create(ctx context.Context, teamID string, in Input) (d Destination, generatedSecret string, err error) {
	if s.Keyring == nil {
		return Destination{}, "", ErrUnavailable
	}
	r, err := resolve(in, nil, credentials{})
	if err != nil {
		return Destination{}, "", err
	}
	if r.kind == KindWebhook && r.creds.Secret == "" {
		r.creds.Secret = newSecret()
		generatedSecret = r.creds.Secret
	}
	p, err := params(r)
	if err != nil {
		return Destination{}, "", err
	}
	p.Seal = s.sealer(teamID, r.creds)
	row, err := s.Store.CreateNotificationDestination(ctx, teamID, p)
	if err != nil {
		return Destination{}, "", nameTaken(err)
	}
	return destinationOf(row), generatedSecret, nil
}

// Update changes what in sets and keeps the rest. New credentials reset
// the count of failed attempts (the destination is worth trying again).
func (s *Service) Update(ctx context.Context, teamID, id string, in Input) (Destination, error) {
	if s.Keyring == nil {
		return Destination{}, ErrUnavailable
	}
	cur, err := s.Get(ctx, teamID, id)
	if err != nil {
		return Destination{}, err
	}
	creds, err := s.open(ctx, teamID, id)
	if err != nil {
		return Destination{}, err
	}
	r, err := resolve(in, &cur, creds)
	if err != nil {
		return Destination{}, err
	}
	if r.kind == KindWebhook && r.creds.Secret == "" {
		r.creds.Secret = newSecret()
	}
	p, err := params(r)
	if err != nil {
		return Destination{}, err
	}
	if r.credsChanged {
		p.Seal = s.sealer(teamID, r.creds)
	}
	row, err := s.Store.UpdateNotificationDestination(ctx, teamID, id, p)
	if err != nil {
		return Destination{}, nameTaken(err)
	}
	return destinationOf(row), nil
}

// nameTaken turns the store's conflict into a field error.
func nameTaken(err error) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && ce.Code == "destination_name_taken" {
		return &InputError{Errors: []FieldError{{Field: "name", Code: ce.Code, Message: "the team has a destination of this name; choose another"}}}
	}
	return err
}

// Get returns one destination.
func (s *Service) Get(ctx context.Context, teamID, id string) (Destination, error) {
	row, err := s.Store.GetNotificationDestination(ctx, teamID, id)
	if err != nil {
		return Destination{}, err
	}
	return destinationOf(row), nil
}

// List returns the team's destinations by name.
func (s *Service) List(ctx context.Context, teamID string) ([]Destination, error) {
	rows, err := s.Store.ListNotificationDestinations(ctx, teamID)
	if err != nil {
		return nil, err
	}
	out := make([]Destination, len(rows))
	for i, r := range rows {
		out[i] = destinationOf(r)
	}
	return out, nil
}

// Delete removes a destination and its deliveries.
func (s *Service) Delete(ctx context.Context, teamID, id string) error {
	return s.Store.DeleteNotificationDestination(ctx, teamID, id)
}

// Deliveries returns a destination's latest deliveries, newest first.
func (s *Service) Deliveries(ctx context.Context, teamID, id string, limit int) ([]store.NotificationDelivery, error) {
	if _, err := s.Store.GetNotificationDestination(ctx, teamID, id); err != nil {
		return nil, err
	}
	return s.Store.ListNotificationDeliveries(ctx, teamID, id, limit)
}

// SendTest queues a test message to one destination (even a disabled
// one: testing it is how people decide to enable it), delivered like any
// other. Run it in a transaction (s.WithStore) so the delivery and its
// job commit together.
func (s *Service) SendTest(ctx context.Context, teamID, id, actor string) (store.NotificationDelivery, error) {
	if s.Emitter == nil {
		return store.NotificationDelivery{}, errors.New("notifications: no emitter to queue the test")
	}
	d, err := s.Get(ctx, teamID, id)
	if err != nil {
		return store.NotificationDelivery{}, err
	}
	ev := Event{Kind: Test, At: s.now(), TeamID: teamID, Message: "Sent from the destination " + d.Name + " by " + actor + "."}
	ev.Key = fmt.Sprintf("test:%d:%s", ev.At.UnixNano(), newSecret()[:8])
	return s.Emitter.deliver(ctx, s.Store, d.ID, ev)
}

// newSecret returns 32 random bytes, base64url.
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
