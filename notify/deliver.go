package notify

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slipwayhq/slipway/notify/send"
	"github.com/slipwayhq/slipway/store"
)

// Deliverer makes delivery attempts: it reads the delivery, opens its
// destination's credentials, renders the message for the destination's
// kind, sends it and records the outcome.
type Deliverer struct {
	Service *Service
	// Dial makes every connection (the outbound-address check of
	// tenant-directed connections); nil fails every delivery, closed.
	Dial send.DialFunc
	// RootCAs verifies SMTP servers' certificates; nil uses the system's.
	RootCAs *x509.CertPool
}

// PermanentError is a delivery that retrying cannot help: the
// destination refused the message, or it is gone or disabled.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Deliver makes one attempt at a pending delivery. last says no attempt
// follows this one, so a failure is recorded as final. It returns nil when
// delivered (or when there is nothing left to do), a *PermanentError when
// retrying cannot help, and any other error to be retried.
func (d *Deliverer) Deliver(ctx context.Context, teamID, deliveryID string, last bool) error {
	st := d.Service.Store
	dl, err := st.GetNotificationDelivery(ctx, teamID, deliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // its destination was deleted
	}
	if err != nil {
		return err
	}
	if dl.Status != store.DeliveryPending {
		return nil
	}
	sendErr := d.attempt(ctx, dl)
	var se *send.Error
	permanent := errors.As(sendErr, &se) && se.Permanent
	var pe *PermanentError
	permanent = permanent || errors.As(sendErr, &pe)
	outcome := store.DeliveryOutcome{At: d.Service.now(), Final: last || permanent}
	if sendErr != nil {
		outcome.Err = sendErr.Error()
	}
	if _, err := st.RecordDeliveryAttempt(context.WithoutCancel(ctx), teamID, deliveryID, outcome); err != nil {
		return err
	}
	if sendErr != nil && permanent {
		return &PermanentError{Err: sendErr}
	}
	return sendErr
}

// attempt sends the delivery's message once.
func (d *Deliverer) attempt(ctx context.Context, dl store.NotificationDelivery) error {
	dest, err := d.Service.Get(ctx, dl.TeamID, dl.DestinationID)
	if err != nil {
		return &PermanentError{Err: fmt.Errorf("destination %s: %w", dl.DestinationID, err)}
	}
	var ev Event
	if err := json.Unmarshal(dl.Payload, &ev); err != nil {
		return &PermanentError{Err: fmt.Errorf("delivery %s: unreadable event: %w", dl.ID, err)}
	}
	if !dest.Enabled && ev.Kind != Test {
		return &PermanentError{Err: errors.New("the destination is disabled")}
	}
	creds, err := d.Service.open(ctx, dl.TeamID, dest.ID)
	if err != nil {
		return err
	}
	return d.send(ctx, dest, creds, dl.ID, ev)
}

func (d *Deliverer) send(ctx context.Context, dest Destination, creds credentials, deliveryID string, ev Event) error {
	h := send.HTTP{Dial: d.Dial}
	var body []byte
	var err error
	switch dest.Kind {
	case KindWebhook:
		if body, err = webhookBody(deliveryID, ev); err != nil {
			return err
		}
		return h.Send(ctx, send.Webhook(creds.URL, []byte(creds.Secret), string(ev.Kind), deliveryID, body, d.Service.now()))
	case KindSlack:
		if body, err = slackBody(ev); err != nil {
			return err
		}
		return h.Send(ctx, send.Post{URL: creds.URL, Body: body})
	case KindDiscord:
		if body, err = discordBody(ev); err != nil {
			return err
		}
		return h.Send(ctx, send.Post{URL: creds.URL, Body: body})
	case KindEmail:
		s := dest.Settings
		subject, text := mailText(ev)
		return send.SMTP{Dial: d.Dial, RootCAs: d.RootCAs, Now: d.Service.now}.Send(ctx,
			send.SMTPServer{Host: s.SMTPHost, Port: s.SMTPPort, Username: s.SMTPUsername, Password: creds.Password},
			send.Mail{From: s.From, To: s.To, Subject: subject, Text: text})
	}
	return &PermanentError{Err: fmt.Errorf("unknown destination kind %q", dest.Kind)}
}

// Prune deletes deliveries older than the retention (30 days).
func (d *Deliverer) Prune(ctx context.Context) (int64, error) {
	return d.Service.Store.PruneNotificationDeliveries(ctx, d.Service.now().Add(-deliveryRetention))
}
