package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// NotificationDestination is where a team's notifications go. Its sealed
// credentials (URL, signing key, SMTP password) are not part of it: only
// NotificationSealed reads them, for the sender.
type NotificationDestination struct {
	ID     string
	TeamID string
	Name   string
	// Kind is webhook, slack, discord or email.
	Kind string
	// Events are the event kinds it receives (notify.Kind values).
	Events []string
	// UnhealthyMinutes is how long a service must be unhealthy before it
	// is told.
	UnhealthyMinutes int
	// Settings is what people may see: the URL's host, the SMTP server,
	// sender and recipients (a JSON object, notify decides its fields).
	Settings json.RawMessage
	Enabled  bool
	// ConsecutiveFailures counts failed attempts since the last success;
	// LastError is the last attempt's error, "" after a success.
	ConsecutiveFailures int
	LastError           string
	LastAttemptAt       *time.Time
	LastSuccessAt       *time.Time
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// NotificationDestinationParams are a destination's fields as written.
// Seal seals its credentials for the destination id it is given, so the
// ciphertext is bound to the row.
type NotificationDestinationParams struct {
	Name             string
	Kind             string
	Events           []string
	UnhealthyMinutes int
	Settings         json.RawMessage
	Enabled          bool
	Seal             func(destinationID string) (Sealed, error)
}

const destinationColumns = `id, team_id, name, kind, events, unhealthy_minutes, settings, enabled,
	consecutive_failures, last_error, last_attempt_at, last_success_at, created_at, updated_at`

func scanDestination(row pgx.Row) (NotificationDestination, error) {
	var d NotificationDestination
	err := row.Scan(&d.ID, &d.TeamID, &d.Name, &d.Kind, &d.Events, &d.UnhealthyMinutes, &d.Settings, &d.Enabled,
		&d.ConsecutiveFailures, &d.LastError, &d.LastAttemptAt, &d.LastSuccessAt, &d.CreatedAt, &d.UpdatedAt)
	return d, err
}

func init() {
	conflicts["notification_destinations_team_id_name_key"] = struct{ field, code string }{"name", "destination_name_taken"}
}

// CreateNotificationDestination stores a new destination of the team.
func (s *Store) CreateNotificationDestination(ctx context.Context, teamID string, p NotificationDestinationParams) (NotificationDestination, error) {
	const op = "create notification destination"
	id := newID("ntf")
	sealed, err := p.Seal(id)
	if err != nil {
		return NotificationDestination{}, fmt.Errorf("%s: %w", op, err)
	}
	d, err := scanDestination(s.db.QueryRow(ctx, `
		INSERT INTO notification_destinations (id, team_id, name, kind, events, unhealthy_minutes, settings, enabled,
			key_id, nonce, ciphertext)
		VALUES ($2, $1, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		RETURNING `+destinationColumns,
		teamID, id, p.Name, p.Kind, nonNil(p.Events), p.UnhealthyMinutes, jsonObject(p.Settings), p.Enabled,
		sealed.KeyID, sealed.Nonce, sealed.Ciphertext))
	return d, wrap(op, err)
}

// UpdateNotificationDestination replaces a destination's fields; Kind is
// kept as it was (a destination does not change kind). A nil Seal keeps
// the sealed credentials.
func (s *Store) UpdateNotificationDestination(ctx context.Context, teamID, id string, p NotificationDestinationParams) (NotificationDestination, error) {
	const op = "update notification destination"
	var sealed *Sealed
	if p.Seal != nil {
		sl, err := p.Seal(id)
		if err != nil {
			return NotificationDestination{}, fmt.Errorf("%s: %w", op, err)
		}
		sealed = &sl
	}
	var keyID *string
	var nonce, ct []byte
	if sealed != nil {
		keyID, nonce, ct = &sealed.KeyID, sealed.Nonce, sealed.Ciphertext
	}
	d, err := scanDestination(s.db.QueryRow(ctx, `
		UPDATE notification_destinations SET name = $3, events = $4, unhealthy_minutes = $5, settings = $6,
			enabled = $7, key_id = coalesce($8, key_id), nonce = coalesce($9, nonce), ciphertext = coalesce($10, ciphertext),
			consecutive_failures = CASE WHEN $8::text IS NULL THEN consecutive_failures ELSE 0 END,
			updated_at = now()
		WHERE team_id = $1 AND id = $2
		RETURNING `+destinationColumns,
		teamID, id, p.Name, nonNil(p.Events), p.UnhealthyMinutes, jsonObject(p.Settings), p.Enabled, keyID, nonce, ct))
	return d, wrap(op, err)
}

// GetNotificationDestination returns one destination of the team.
func (s *Store) GetNotificationDestination(ctx context.Context, teamID, id string) (NotificationDestination, error) {
	d, err := scanDestination(s.db.QueryRow(ctx, `SELECT `+destinationColumns+`
		FROM notification_destinations WHERE team_id = $1 AND id = $2`, teamID, id))
	return d, wrap("get notification destination", err)
}

// ListNotificationDestinations returns the team's destinations by name.
func (s *Store) ListNotificationDestinations(ctx context.Context, teamID string) ([]NotificationDestination, error) {
	const op = "list notification destinations"
	rows, err := s.db.Query(ctx, `SELECT `+destinationColumns+`
		FROM notification_destinations WHERE team_id = $1 ORDER BY name`, teamID)
	if err != nil {
		return nil, wrap(op, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (NotificationDestination, error) { return scanDestination(r) })
	return list, wrap(op, err)
}

// DeleteNotificationDestination removes a destination and its deliveries.
func (s *Store) DeleteNotificationDestination(ctx context.Context, teamID, id string) error {
	return s.execOne(ctx, "delete notification destination",
		`DELETE FROM notification_destinations WHERE team_id = $1 AND id = $2`, teamID, id)
}

// NotificationSealed returns a destination's sealed credentials, for the
// sender alone.
func (s *Store) NotificationSealed(ctx context.Context, teamID, id string) (Sealed, error) {
	var sl Sealed
	err := s.db.QueryRow(ctx, `SELECT key_id, nonce, ciphertext FROM notification_destinations
		WHERE team_id = $1 AND id = $2`, teamID, id).Scan(&sl.KeyID, &sl.Nonce, &sl.Ciphertext)
	return sl, wrap("read notification credentials", err)
}

// NotificationTargets selects the destinations an event goes to.
type NotificationTargets struct {
	// Event is the event kind the destinations must have chosen.
	Event string
	// UnhealthyFor, when set, keeps destinations whose UnhealthyMinutes
	// have passed.
	UnhealthyFor *time.Duration
	// DeliveredKey, when set, keeps destinations that got a delivery with
	// this dedupe key (a recovery goes where the outage was told).
	DeliveredKey string
}

// ListNotificationTargets returns the ids of the team's enabled
// destinations that an event selected by t goes to.
func (s *Store) ListNotificationTargets(ctx context.Context, teamID string, t NotificationTargets) ([]string, error) {
	const op = "list notification targets"
	var seconds *int64
	if t.UnhealthyFor != nil {
		n := int64(*t.UnhealthyFor / time.Second)
		seconds = &n
	}
	rows, err := s.db.Query(ctx, `
		SELECT d.id FROM notification_destinations d
		WHERE d.team_id = $1 AND d.enabled AND $2 = ANY (d.events)
			AND ($3::bigint IS NULL OR d.unhealthy_minutes * 60 <= $3)
			AND ($4 = '' OR EXISTS (SELECT 1 FROM notification_deliveries x
				WHERE x.team_id = d.team_id AND x.destination_id = d.id AND x.dedupe_key = $4))
		ORDER BY d.id`, teamID, t.Event, seconds, t.DeliveredKey)
	if err != nil {
		return nil, wrap(op, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, wrap(op, err)
}

// NotificationDelivery is one message to one destination.
type NotificationDelivery struct {
	ID            string
	TeamID        string
	DestinationID string
	Event         string
	DedupeKey     string
	Payload       json.RawMessage
	// Status is pending, delivered or failed (given up).
	Status      string
	Attempts    int
	LastError   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	DeliveredAt *time.Time
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

const deliveryColumns = `id, team_id, destination_id, event, dedupe_key, payload, status, attempts, last_error,
	created_at, updated_at, delivered_at`

func scanDelivery(row pgx.Row) (NotificationDelivery, error) {
	var d NotificationDelivery
	err := row.Scan(&d.ID, &d.TeamID, &d.DestinationID, &d.Event, &d.DedupeKey, &d.Payload, &d.Status, &d.Attempts,
		&d.LastError, &d.CreatedAt, &d.UpdatedAt, &d.DeliveredAt)
	return d, err
}

// CreateNotificationDelivery records a pending delivery to a destination
// of the team. created is false, with the existing delivery, when one with
// the same dedupe key exists: the event was told already.
func (s *Store) CreateNotificationDelivery(ctx context.Context, teamID, destinationID, event, dedupeKey string, payload json.RawMessage) (d NotificationDelivery, created bool, err error) {
	const op = "create notification delivery"
	d, err = scanDelivery(s.db.QueryRow(ctx, `
		INSERT INTO notification_deliveries (id, team_id, destination_id, event, dedupe_key, payload)
		VALUES ($2, $1, $3, $4, $5, $6)
		ON CONFLICT (destination_id, dedupe_key) DO NOTHING
		RETURNING `+deliveryColumns,
		teamID, newID("dlv"), destinationID, event, dedupeKey, payload))
	if err == nil {
		return d, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return d, false, wrap(op, err)
	}
	d, err = scanDelivery(s.db.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM notification_deliveries
		WHERE team_id = $1 AND destination_id = $2 AND dedupe_key = $3`, teamID, destinationID, dedupeKey))
	return d, false, wrap(op, err)
}

// GetNotificationDelivery returns one delivery of the team.
func (s *Store) GetNotificationDelivery(ctx context.Context, teamID, id string) (NotificationDelivery, error) {
	d, err := scanDelivery(s.db.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM notification_deliveries
		WHERE team_id = $1 AND id = $2`, teamID, id))
	return d, wrap("get notification delivery", err)
}

// ListNotificationDeliveries returns a destination's latest deliveries,
// newest first, at most limit.
func (s *Store) ListNotificationDeliveries(ctx context.Context, teamID, destinationID string, limit int) ([]NotificationDelivery, error) {
	const op = "list notification deliveries"
	rows, err := s.db.Query(ctx, `SELECT `+deliveryColumns+` FROM notification_deliveries
		WHERE team_id = $1 AND destination_id = $2 ORDER BY created_at DESC, id LIMIT $3`, teamID, destinationID, limit)
	if err != nil {
		return nil, wrap(op, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (NotificationDelivery, error) { return scanDelivery(r) })
	return list, wrap(op, err)
}

// DeliveryOutcome is the result of one delivery attempt.
type DeliveryOutcome struct {
	// Err is the attempt's error, "" when it was delivered.
	Err string
	// Final marks a failure that will not be retried.
	Final bool
	At    time.Time
}

// maxDeliveryError bounds a stored delivery error.
const maxDeliveryError = 2000

// RecordDeliveryAttempt records an attempt on the delivery and its
// destination in one transaction: a success resets the destination's
// consecutive failures, a failure counts one more.
func (s *Store) RecordDeliveryAttempt(ctx context.Context, teamID, deliveryID string, o DeliveryOutcome) (NotificationDelivery, error) {
	const op = "record notification delivery"
	msg := o.Err
	if len(msg) > maxDeliveryError {
		msg = strings.ToValidUTF8(msg[:maxDeliveryError], "")
	}
	status := DeliveryPending
	switch {
	case msg == "":
		status = DeliveryDelivered
	case o.Final:
		status = DeliveryFailed
	}
	var d NotificationDelivery
	err := s.WithTx(ctx, func(tx *Store) error {
		var err error
		d, err = scanDelivery(tx.db.QueryRow(ctx, `
			UPDATE notification_deliveries SET status = $3, attempts = attempts + 1, last_error = $4, updated_at = $5,
				delivered_at = CASE WHEN $3 = 'delivered' THEN $5 ELSE delivered_at END
			WHERE team_id = $1 AND id = $2
			RETURNING `+deliveryColumns, teamID, deliveryID, status, msg, o.At))
		if err != nil {
			return wrap(op, err)
		}
		_, err = tx.db.Exec(ctx, `
			UPDATE notification_destinations SET last_attempt_at = $3, last_error = $4,
				consecutive_failures = CASE WHEN $4 = '' THEN 0 ELSE consecutive_failures + 1 END,
				last_success_at = CASE WHEN $4 = '' THEN $3 ELSE last_success_at END
			WHERE team_id = $1 AND id = $2`, teamID, d.DestinationID, o.At, msg)
		return wrap(op, err)
	})
	return d, err
}

// PruneNotificationDeliveries deletes deliveries created before cutoff,
// across teams (maintenance).
func (s *Store) PruneNotificationDeliveries(ctx context.Context, cutoff time.Time) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM notification_deliveries WHERE created_at < $1`, cutoff)
	if err != nil {
		return 0, wrap("prune notification deliveries", err)
	}
	return tag.RowsAffected(), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func jsonObject(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(`{}`)
	}
	return b
}
