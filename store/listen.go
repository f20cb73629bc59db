package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// AuthChannel is the notification channel migration 0027's triggers notify
// when a session, user, membership, team or API token changes in a way
// that could change what a cookie or token resolves to. The payload is
// empty.
const AuthChannel = "slipway_auth"

// TeamDataChannel is the notification channel migration 0028's triggers
// notify when what the dashboard's applications list or Overview shows of
// a team may have changed: the payload is the team's id, or empty when
// every team's may have (a user's name or e-mail).
const TeamDataChannel = "slipway_team_data"

// Listen holds a connection (with the pool's settings, outside the pool)
// listening on channel (AuthChannel, TeamDataChannel). It calls listening
// once the listen is in place (a notification it sent itself has arrived)
// and changed for every notification with its payload, and returns when
// ctx ends (nil) or the connection fails.
// Notifications arrive when the changing transaction commits, in commit
// order.
func (s *Store) Listen(ctx context.Context, channel string, listening func(), changed func(payload string)) error {
	op := "listen on " + channel
	if s.pool == nil {
		return wrap(op, errors.New("the store has no pool (inside a transaction)"))
	}
	// A connection of its own, beside the pool: it listens for as long as
	// serve runs, and must not take one of a small pool's connections.
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return listenEnd(ctx, op, err)
	}
	defer func() {
		closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(closing)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return listenEnd(ctx, op, err)
	}
	// The listen counts only once a notification sent through the pool
	// arrives: behind a proxy that pools by transaction, LISTEN succeeds
	// but nothing is ever delivered.
	probe := listenProbe + rand.Text()
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, probe); err != nil {
		return listenEnd(ctx, op, err)
	}
	waiting, stopWaiting := context.WithTimeout(ctx, listenProbeTimeout)
	defer stopWaiting()
	for {
		n, err := conn.WaitForNotification(waiting)
		if err != nil {
			if ctx.Err() == nil && waiting.Err() != nil {
				return wrap(op, fmt.Errorf("a notification sent through the pool did not arrive within %v: "+
					"Slipway needs LISTEN/NOTIFY (connect directly, or through a proxy that pools by session)", listenProbeTimeout))
			}
			return listenEnd(ctx, op, err)
		}
		if n.Payload == probe {
			break
		}
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return listenEnd(ctx, op, err)
		}
		if !strings.HasPrefix(n.Payload, listenProbe) {
			changed(n.Payload)
		}
	}
}

// listenProbe starts the payload of the notification each Listen sends
// itself to check that notifications arrive; every listener ignores it.
const listenProbe = "probe:"

// listenProbeTimeout is how long Listen waits for its probe.
const listenProbeTimeout = 30 * time.Second

// listenEnd is nil when ctx ended (the caller stopped listening), err
// wrapped otherwise.
func listenEnd(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return wrap(op, err)
}
