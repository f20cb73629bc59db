package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// Enqueue queues the delivery job of one delivery in tx's transaction
// (package jobs implements it with River).
type Enqueue func(ctx context.Context, tx *store.Store, teamID, deliveryID string) error

// Emitter turns events into deliveries. A nil *Emitter emits nothing, so
// code that runs without notifications needs no special case.
type Emitter struct {
	// PublicURL is the dashboard's address ([server] public_url), the base
	// of every message's link; empty leaves messages without one.
	PublicURL string
	Enqueue   Enqueue
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Emit records one delivery for each of the team's enabled destinations
// that chose ev.Kind, and queues each, in tx's transaction: the event is
// told if and only if what caused it commits. An event whose Key was
// delivered to a destination already is not delivered there again.
//
// It is the one function every source of events calls: the deployment
// pipeline, the sampler (service health, certificates) and the scheduler
// and backups (job.failed, backup.failed, with the job's or backup's name
// and a Key naming the run).
func (e *Emitter) Emit(ctx context.Context, tx *store.Store, ev Event) error {
	if e == nil {
		return nil
	}
	if ev.TeamID == "" || ev.Kind == "" {
		return errors.New("notify: an event needs a team and a kind")
	}
	if ev.Key == "" {
		if ev.DeploymentID == "" {
			return fmt.Errorf("notify: a %s event needs a Key", ev.Kind)
		}
		ev.Key = string(ev.Kind) + ":" + ev.DeploymentID
	}
	targets := store.NotificationTargets{Event: string(ev.Kind), DeliveredKey: ev.DeliveredKey}
	if ev.Kind == ServiceUnhealthy {
		d := ev.UnhealthyFor
		targets.UnhealthyFor = &d
	}
	ids, err := tx.ListNotificationTargets(ctx, ev.TeamID, targets)
	if err != nil || len(ids) == 0 {
		return err
	}
	if err := e.describe(ctx, tx, &ev); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := e.deliver(ctx, tx, id, ev); err != nil {
			return err
		}
	}
	return nil
}

// deliver records the delivery of ev to one destination and queues it
// when it is new.
func (e *Emitter) deliver(ctx context.Context, tx *store.Store, destinationID string, ev Event) (store.NotificationDelivery, error) {
	if ev.At.IsZero() {
		ev.At = e.now()
	}
	if ev.URL == "" {
		ev.URL = e.link(ev)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return store.NotificationDelivery{}, err
	}
	d, created, err := tx.CreateNotificationDelivery(ctx, ev.TeamID, destinationID, string(ev.Kind), ev.Key, payload)
	if err != nil || !created {
		return d, err
	}
	if e.Enqueue == nil {
		return d, errors.New("notify: no Enqueue to queue deliveries")
	}
	return d, e.Enqueue(ctx, tx, ev.TeamID, d.ID)
}

// describe fills the names of the application and environment the event
// names by id, so every message can say them.
func (e *Emitter) describe(ctx context.Context, tx *store.Store, ev *Event) error {
	if ev.EnvironmentID != "" && (ev.EnvironmentName == "" || ev.ApplicationID == "") {
		env, err := tx.GetEnvironment(ctx, ev.TeamID, ev.EnvironmentID)
		if err != nil {
			return fmt.Errorf("notify: %w", err)
		}
		ev.EnvironmentName, ev.ApplicationID, ev.Preview = env.Name, env.ApplicationID, env.Kind == store.KindPreview
	}
	if ev.ApplicationID != "" && ev.ApplicationName == "" {
		app, err := tx.GetApplication(ctx, ev.TeamID, ev.ApplicationID)
		if err != nil {
			return fmt.Errorf("notify: %w", err)
		}
		ev.ApplicationName = app.Name
	}
	return nil
}

// link is the dashboard page of what the event is about.
func (e *Emitter) link(ev Event) string {
	base := strings.TrimRight(e.PublicURL, "/")
	if base == "" {
		return ""
	}
	switch {
	case ev.ApplicationID != "" && ev.EnvironmentName != "" && (ev.Job != "" || ev.Backup != ""):
		return base + "/applications/" + url.PathEscape(ev.ApplicationID) + "/environments/" + url.PathEscape(ev.EnvironmentName) + "/daytwo"
	case ev.ApplicationID != "" && ev.DeploymentID != "":
		return base + "/applications/" + url.PathEscape(ev.ApplicationID) + "/deployments/" + url.PathEscape(ev.DeploymentID)
	case ev.ApplicationID != "":
		return base + "/applications/" + url.PathEscape(ev.ApplicationID)
	}
	return base + "/notifications"
}

func (e *Emitter) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}
