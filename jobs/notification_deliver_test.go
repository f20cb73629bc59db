package jobs_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/notify/notifytest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestNotificationDeliver_RetriesWithBackoff runs deliveries through a
// real River client: a destination answering 503 twice is retried and
// delivered on the third attempt, recorded with its attempts; one
// answering 404 is given up at once and recorded failed.
func TestNotificationDeliver_RetriesWithBackoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	tn := storetest.NewTenant(t, st, "acme", "shop")
	key, err := keyring.NewKey(bytes.Repeat([]byte{3}, keyring.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	svc := &notify.Service{Store: st, Keyring: keyring.New(key), Emitter: &notify.Emitter{
		PublicURL: "https://slipway.example.com",
	}}
	var dialer net.Dialer
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.NotificationDeliverWorker{
		Deliverer: &notify.Deliverer{Service: svc, Dial: dialer.DialContext},
		Backoff:   func(int) time.Duration { return 50 * time.Millisecond },
	})
	client, err := jobs.NewClient(st.Pool(), workers, jobs.Config{Work: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	svc.Emitter.Enqueue = jobs.NotificationEnqueue(func(ctx context.Context, tx *store.Store, args river.JobArgs) error {
		_, err := client.InsertTx(ctx, tx.Tx(), args, nil)
		return err
	})
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled)
	t.Cleanup(cancel)
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		_ = client.Stop(stopCtx)
	})

	flaky := notifytest.NewHTTPReceiver(t, 200, 503, 503)
	gone := notifytest.NewHTTPReceiver(t, 404)
	name1, name2, kind := "flaky", "gone", notify.KindSlack
	for _, in := range []notify.Input{{Name: &name1, Kind: &kind, URL: &flaky.URL}, {Name: &name2, Kind: &kind, URL: &gone.URL}} {
		if _, _, err := svc.Create(ctx, tn.Team.ID, in); err != nil {
			t.Fatal(err)
		}
	}
	err = st.WithTx(ctx, func(tx *store.Store) error {
		return svc.Emitter.Emit(ctx, tx, notify.Event{Kind: notify.DeploymentFailed, TeamID: tn.Team.ID,
			ApplicationID: tn.App.ID, EnvironmentID: tn.Env.ID, DeploymentID: "dep_x", Code: "rollout_failed"})
	})
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[river.EventKind]int{}
	timeout := time.After(60 * time.Second)
	for byKind[river.EventKindJobCompleted]+byKind[river.EventKindJobCancelled] < 2 {
		select {
		case ev := <-events:
			byKind[ev.Kind]++
		case <-timeout:
			t.Fatalf("jobs finished: %v", byKind)
		}
	}
	if byKind[river.EventKindJobCompleted] != 1 || byKind[river.EventKindJobCancelled] != 1 {
		t.Fatalf("jobs finished: %v, want one completed and one cancelled", byKind)
	}
	if n := len(flaky.Requests()); n != 3 {
		t.Fatalf("flaky receiver got %d requests, want 3", n)
	}
	if n := len(gone.Requests()); n != 1 {
		t.Fatalf("gone receiver got %d requests, want 1", n)
	}
	dests, err := svc.List(ctx, tn.Team.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dests {
		dl, err := st.ListNotificationDeliveries(ctx, tn.Team.ID, d.ID, 10)
		if err != nil || len(dl) != 1 {
			t.Fatalf("%s deliveries %v %v", d.Name, dl, err)
		}
		switch d.Name {
		case "flaky":
			if dl[0].Status != store.DeliveryDelivered || dl[0].Attempts != 3 || d.ConsecutiveFailures != 0 {
				t.Errorf("flaky: delivery %s after %d attempts, destination failures %d", dl[0].Status, dl[0].Attempts, d.ConsecutiveFailures)
			}
		case "gone":
			if dl[0].Status != store.DeliveryFailed || dl[0].Attempts != 1 || d.LastError == "" {
				t.Errorf("gone: delivery %s after %d attempts, error %q", dl[0].Status, dl[0].Attempts, d.LastError)
			}
		}
	}
}
