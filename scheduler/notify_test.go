package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/scheduler"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestRun_FailedRunNotifies: a run that fails (here: its environment never
// deployed successfully) is told to the destinations that chose
// job.failed, once, with the job, the reason and a link to the
// environment's schedules page, in the transaction that records its end;
// a destination that did not choose it is not told.
func TestRun_FailedRunNotifies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	tn := storetest.NewTenant(t, st, "notified", "notes")
	key, err := keyring.NewKey(bytes.Repeat([]byte{7}, keyring.KeySize))
	must(t, err)
	var queued []string
	emitter := &notify.Emitter{PublicURL: "https://slipway.example.com", Enqueue: func(_ context.Context, _ *store.Store, _, id string) error {
		queued = append(queued, id)
		return nil
	}}
	svc := &notify.Service{Store: st, Keyring: keyring.New(key), Emitter: emitter}
	hook := "https://hooks.example.com/x"
	name, kind := "jobs", notify.KindSlack
	jobs, _, err := svc.Create(ctx, tn.Team.ID, notify.Input{Name: &name, Kind: &kind, URL: &hook, Events: &[]string{string(notify.JobFailed)}})
	must(t, err)
	other := "deploys"
	deploys, _, err := svc.Create(ctx, tn.Team.ID, notify.Input{Name: &other, Kind: &kind, URL: &hook, Events: &[]string{string(notify.DeploymentFailed)}})
	must(t, err)

	run, err := st.CreateJobRun(ctx, tn.Team.ID, store.JobRunParams{ApplicationID: tn.App.ID, EnvironmentID: tn.Env.ID, Job: "report", Origin: store.ByHand, Actor: "user:test"})
	must(t, err)
	s := &scheduler.Scheduler{Store: st, Currents: &pipeline.Pipeline{Store: st}, Notify: emitter}
	must(t, s.Run(ctx, tn.Team.ID, run.ID))
	must(t, s.Run(ctx, tn.Team.ID, run.ID)) // a retried job: the run has ended

	got, err := st.GetJobRun(ctx, tn.Team.ID, run.ID)
	must(t, err)
	if got.State != store.RunFailed {
		t.Fatalf("run state %s, want failed", got.State)
	}
	told, err := st.ListNotificationDeliveries(ctx, tn.Team.ID, jobs.ID, 10)
	must(t, err)
	if len(told) != 1 || len(queued) != 1 || told[0].Event != string(notify.JobFailed) {
		t.Fatalf("job.failed deliveries %+v, queued %v: want one", told, queued)
	}
	var ev notify.Event
	must(t, json.Unmarshal(told[0].Payload, &ev))
	wantURL := "https://slipway.example.com/applications/" + tn.App.ID + "/environments/" + tn.Env.Name + "/daytwo"
	if ev.Job != "report" || ev.ApplicationName != "notes" || !strings.Contains(ev.Message, scheduler.CodeNotDeployed) || ev.URL != wantURL {
		t.Fatalf("event %+v: want the job, the application, the reason and %s", ev, wantURL)
	}
	if others, err := st.ListNotificationDeliveries(ctx, tn.Team.ID, deploys.ID, 10); err != nil || len(others) != 0 {
		t.Fatalf("a destination without job.failed got %d deliveries (%v)", len(others), err)
	}
}
