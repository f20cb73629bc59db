package swarm

import (
	"strings"
	"testing"

	"github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/manifest"
)

// TestDesired_ScheduledJobsNeverRunInDeployments: a job with a schedule
// is in Scheduled, not in the jobs a deployment runs; a run of it is named
// and labelled after the run and pinned where the run says.
func TestDesired_ScheduledJobsNeverRunInDeployments(t *testing.T) {
	t.Parallel()
	in := sampleInput()
	in.Manifest.Spec.Jobs = append(in.Manifest.Spec.Jobs, manifest.Job{Name: "report", Service: "web", Command: []string{"/app", "report"}, Schedule: "@daily", Run: manifest.JobRunSchedule})
	st, err := Desired(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Jobs) != 1 || st.Jobs[0].Job != "migrate" || len(st.Scheduled) != 1 || st.Scheduled[0].Job != "report" {
		t.Fatalf("jobs %v, scheduled %v", st.Jobs, st.Scheduled)
	}
	c := RunContext{EnvID: in.EnvID, EnvShortID: in.EnvShortID, RunID: "run_abc", Constraints: []string{"node.id==n1"}}
	run := ScheduledRun(st.Scheduled[0], c)
	if run.Spec.Name == st.Scheduled[0].Spec.Name || !strings.HasPrefix(run.Spec.Name, "slw-"+in.EnvShortID+"-run-report-") {
		t.Errorf("run name %q", run.Spec.Name)
	}
	if run.Spec.Labels[LabelRun] != "run_abc" || st.Scheduled[0].Spec.Labels[LabelRun] != "" {
		t.Error("the run label is missing, or leaked into the desired job")
	}
	if p := run.Spec.TaskTemplate.Placement; p == nil || p.Constraints[0] != "node.id==n1" {
		t.Errorf("placement %+v", p)
	}
}

// TestPlan_KeepsOneOffRuns: a deployment removes neither a running one-off
// run nor the secret only it mounts.
func TestPlan_KeepsOneOffRuns(t *testing.T) {
	t.Parallel()
	in := sampleInput()
	st, err := Desired(in)
	if err != nil {
		t.Fatal(err)
	}
	c := RunContext{TeamID: in.TeamID, AppID: in.AppID, EnvID: in.EnvID, EnvShortID: in.EnvShortID, RunID: "bak_1"}
	job, secret := ArchiverRun(c, ArchiverInput{Image: "slipway:x", Mode: ArchiveSend, Volume: VolumeName(in.EnvShortID, "data"), SocketPath: "/var/lib/slipway/a.sock", Token: []byte("t")})
	obs := Observed{
		Services: []swarm.Service{{ID: "s1", Spec: job.Spec}},
		Secrets:  []swarm.Secret{{ID: "x1", Spec: secret}},
	}
	actions, err := Plan(obs, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actions {
		if a.Op == OpRemove {
			t.Errorf("plan removes %s %s", a.Kind, a.Name)
		}
	}
	if m := job.Spec.TaskTemplate.ContainerSpec.Mounts; !m[0].ReadOnly || m[1].Source != "/var/lib/slipway/a.sock" {
		t.Errorf("archiver mounts %+v", m)
	}
}

func TestPostgresRun_Pgpass(t *testing.T) {
	t.Parallel()
	c := RunContext{EnvID: "env_1", EnvShortID: "abc", RunID: "bak_2"}
	svc := ServiceSpec{Service: "db", Spec: swarm.ServiceSpec{TaskTemplate: swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Image: "postgres@sha256:1"}}}}
	job, secrets := PostgresRun(c, PostgresInput{Service: svc, Mode: PostgresDump, Database: "notes", User: "app", Port: 5432, Password: []byte("p:a\\ss\n"), HelperVolume: "h"})
	cs := job.Spec.TaskTemplate.ContainerSpec
	if cs.Image != "postgres@sha256:1" || strings.Join(cs.Command[:5], " ") != "pg_dump --format custom --file /backup/dump" {
		t.Errorf("container %s %v", cs.Image, cs.Command)
	}
	if len(secrets) != 1 || string(secrets[0].Data) != "*:*:*:*:p\\:a\\\\ss\n" {
		t.Fatalf("pgpass secrets %+v", secrets)
	}
	if cs.Env[0] != "PGPASSFILE=/run/secrets/slipway-pgpass" || cs.Secrets[0].File.Mode != 0o400 {
		t.Errorf("env %v secrets %+v", cs.Env, cs.Secrets[0].File)
	}
	_, none := PostgresRun(c, PostgresInput{Service: svc, Mode: PostgresRestore, HelperVolume: "h"})
	if len(none) != 0 {
		t.Error("a pgpass secret without a password")
	}
}
