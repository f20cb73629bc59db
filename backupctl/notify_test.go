package backupctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/slipwayhq/slipway/backupctl"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestBackup_FailedBackupNotifies: a backup that fails (here: its
// environment never deployed successfully) is told once to the
// destinations that chose backup.failed, naming what was backed up and why.
func TestBackup_FailedBackupNotifies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	tn := storetest.NewTenant(t, st, "told", "notes")
	key, err := keyring.NewKey(bytes.Repeat([]byte{5}, keyring.KeySize))
	must(t, err)
	emitter := &notify.Emitter{Enqueue: func(context.Context, *store.Store, string, string) error { return nil }}
	svc := &notify.Service{Store: st, Keyring: keyring.New(key), Emitter: emitter}
	name, kind, hook := "backups", notify.KindDiscord, "https://discord.example.com/api/webhooks/1/x"
	dest, _, err := svc.Create(ctx, tn.Team.ID, notify.Input{Name: &name, Kind: &kind, URL: &hook, Events: &[]string{string(notify.BackupFailed)}})
	must(t, err)
	b, err := st.CreateBackup(ctx, tn.Team.ID, store.BackupParams{ApplicationID: tn.App.ID, EnvironmentID: tn.Env.ID, EnvironmentName: tn.Env.Name,
		Kind: manifest.BackupVolume, Subject: "uploads", Origin: store.ByHand, Actor: "user:test"})
	must(t, err)
	c := &backupctl.Controller{Store: st, Currents: &pipeline.Pipeline{Store: st}, Notify: emitter}
	must(t, c.Backup(ctx, tn.Team.ID, b.ID))
	must(t, c.Backup(ctx, tn.Team.ID, b.ID)) // a retried job: the backup has ended

	told, err := st.ListNotificationDeliveries(ctx, tn.Team.ID, dest.ID, 10)
	must(t, err)
	if len(told) != 1 || told[0].Event != string(notify.BackupFailed) {
		t.Fatalf("backup.failed deliveries %+v: want one", told)
	}
	var ev notify.Event
	must(t, json.Unmarshal(told[0].Payload, &ev))
	if ev.Backup != "volume uploads ("+b.ID+")" || ev.EnvironmentName != tn.Env.Name || ev.Message == "" {
		t.Fatalf("event %+v: want the volume, the environment and the reason", ev)
	}
}
