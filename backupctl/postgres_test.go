package backupctl_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/backupctl/backuptest"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/store"
)

// pgManifest runs the Postgres test image as db, declared as Postgres,
// with two scheduled jobs that run psql in its image: one writes a row,
// one reads the table.
const pgManifest = `
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "notes"
[[spec.volumes]]
name = "pgdata"
[[spec.services]]
name = "db"
[spec.services.source]
type = "image"
image = %q
[[spec.services.mounts]]
volume = "pgdata"
target = "/var/lib/postgresql/data"
[spec.services.healthcheck]
type = "command"
command = ["pg_isready", "-h", "127.0.0.1", "-U", "postgres"]
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 30
[spec.services.postgres]
database = "postgres"
[[spec.jobs]]
name = "seed"
service = "db"
command = ["psql", "-h", "db", "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-c", "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('%s')"]
schedule = "0 0 1 1 *"
[[spec.jobs]]
name = "query"
service = "db"
command = ["psql", "-h", "db", "-U", "postgres", "-At", "-c", "SELECT body FROM notes"]
schedule = "0 0 1 1 *"
`

// runNow runs a scheduled job by hand to its end and returns the run.
func (b *bundle) runNow(t *testing.T, env store.Environment, job string) store.JobRun {
	t.Helper()
	run, err := b.sched.RunNow(t.Context(), b.Team.ID, env.ID, job, "test")
	must(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	must(t, b.sched.Run(ctx, b.Team.ID, run.ID))
	run, err = b.Store.GetJobRun(t.Context(), b.Team.ID, run.ID)
	must(t, err)
	return run
}

// TestBackup_PostgresDumpRestoredIntoSecondEnvironment: pg_dump runs in
// the Postgres service's own image, and its dump, restored into another
// environment of the application, answers the query there.
func TestBackup_PostgresDumpRestoredIntoSecondEnvironment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	doc := fmt.Sprintf(pgManifest, backuptest.PostgresImage(t), "restored across environments")
	pipelinetest.ExpectState(t, b.Deploy(t, doc), store.StateSucceeded)
	staging, err := b.Store.CreateEnvironment(t.Context(), b.Team.ID, store.EnvironmentParams{ApplicationID: b.App.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "staging"})
	must(t, err)
	pipelinetest.ExpectState(t, b.DeployTo(t, b.Pipeline, b.App.ID, staging.ID, doc), store.StateSucceeded)

	if run := b.runNow(t, b.Env, "seed"); run.State != store.RunSucceeded {
		t.Fatalf("seed: %s %s\n%s", run.State, run.Message, run.Output)
	}
	bk := b.backup(t, b.Env, "postgres", "db")
	if bk.SizeBytes == 0 {
		t.Fatalf("backup = %+v", bk)
	}
	// Staging has no table yet.
	if run := b.runNow(t, staging, "query"); run.State != store.RunFailed || !strings.Contains(run.Output, "notes") {
		t.Fatalf("query before the restore: %s\n%s", run.State, run.Output)
	}
	r := b.restore(t, staging, bk)
	if r.State != store.RestoreSucceeded {
		t.Fatalf("restore = %+v", r)
	}
	run := b.runNow(t, staging, "query")
	if run.State != store.RunSucceeded || strings.TrimSpace(run.Output) != "restored across environments" || run.ExitCode == nil || *run.ExitCode != 0 {
		t.Fatalf("query after the restore: %s %v %q", run.State, run.ExitCode, run.Output)
	}
}
