package sampler

import (
	"context"
	"errors"
	"time"

	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/runtime/usage"
	"github.com/slipwayhq/slipway/store"
)

// followHealth records which services are unhealthy since when, and
// tells destinations: service.unhealthy once a destination's N minutes
// have passed, service.recovered where the outage was told. Each change
// and its notification commit together.
func (s *Sampler) followHealth(ctx context.Context, slot time.Time, tasks []usage.ServiceTasks) error {
	known, err := s.Store.ListServiceHealth(ctx)
	if err != nil {
		return err
	}
	type key struct{ env, service string }
	was := map[key]store.ServiceHealth{}
	for _, h := range known {
		was[key{h.EnvironmentID, h.Service}] = h
	}
	seen := map[key]bool{}
	var errs []error
	for _, t := range tasks {
		k := key{t.Key.EnvironmentID, t.Key.Service}
		seen[k] = true
		prev, unhealthyBefore := was[k]
		switch {
		case !t.Healthy:
			errs = append(errs, s.Store.WithTx(ctx, func(tx *store.Store) error {
				h, err := tx.MarkServiceUnhealthy(ctx, t.Key.TeamID, t.Key.EnvironmentID, t.Key.Service, slot, unhealthyReason(t))
				if errors.Is(err, store.ErrNotFound) {
					return nil // its environment is gone
				}
				if err != nil {
					return err
				}
				since := h.UnhealthySince
				return s.Notify.Emit(ctx, tx, notify.Event{
					Kind: notify.ServiceUnhealthy, At: slot, TeamID: t.Key.TeamID, EnvironmentID: t.Key.EnvironmentID,
					Service: t.Key.Service, Message: h.Reason, Since: &since,
					UnhealthyFor: slot.Sub(since), Key: notify.UnhealthyKey(t.Key.EnvironmentID, t.Key.Service, since),
				})
			}))
		case unhealthyBefore:
			errs = append(errs, s.recovered(ctx, slot, prev, true))
		}
	}
	// A service no longer running at all (removed, or its environment
	// torn down) is forgotten without a word.
	for k, h := range was {
		if !seen[k] {
			errs = append(errs, s.recovered(ctx, slot, h, false))
		}
	}
	return errors.Join(errs...)
}

// recovered forgets an unhealthy episode, telling destinations that were
// told of it when tell is set.
func (s *Sampler) recovered(ctx context.Context, slot time.Time, h store.ServiceHealth, tell bool) error {
	return s.Store.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.ClearServiceHealth(ctx, h.TeamID, h.EnvironmentID, h.Service); err != nil || !tell {
			return err
		}
		since := h.UnhealthySince
		return s.Notify.Emit(ctx, tx, notify.Event{
			Kind: notify.ServiceRecovered, At: slot, TeamID: h.TeamID, EnvironmentID: h.EnvironmentID, Service: h.Service,
			Since: &since, Message: "Unhealthy for " + slot.Sub(since).Round(time.Second).String() + ".",
			Key:          notify.RecoveredKey(h.EnvironmentID, h.Service, since),
			DeliveredKey: notify.UnhealthyKey(h.EnvironmentID, h.Service, since),
		})
	})
}

// checkCertificates tells destinations of certificates that failed or
// end within notify.CertificateExpiryWarning, once per failure and once
// per certificate.
func (s *Sampler) checkCertificates(ctx context.Context, now time.Time) error {
	alerts, err := s.Store.ListCertificateAlerts(ctx, now.Add(notify.CertificateExpiryWarning))
	if err != nil {
		return err
	}
	var errs []error
	for _, a := range alerts {
		ev := notify.Event{At: now, TeamID: a.TeamID, EnvironmentID: a.EnvironmentID, Hostname: a.Hostname, ExpiresAt: a.ExpiresAt}
		if a.State == "failed" {
			ev.Kind, ev.Message, ev.Key = notify.CertificateFailed, a.LastError, notify.CertificateFailedKey(a.Hostname, a.UpdatedAt)
		} else {
			ev.Kind, ev.Key = notify.CertificateExpiring, notify.CertificateExpiringKey(a.Hostname, *a.ExpiresAt)
			ev.Message = "The certificate was not renewed; it expires " + a.ExpiresAt.UTC().Format(time.RFC1123) + "."
		}
		errs = append(errs, s.Store.WithTx(ctx, func(tx *store.Store) error { return s.Notify.Emit(ctx, tx, ev) }))
	}
	return errors.Join(errs...)
}
