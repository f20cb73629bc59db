package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// cliServer is the real app behind an httptest server, with serve's
// insert-only River client, and SLIPWAY_URL/SLIPWAY_TOKEN pointing at it.
type cliServer struct {
	st   *store.Store
	team store.Team
}

func startCLIServer(t *testing.T) *cliServer {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	inserter, err := newJobClient(st.Pool(), logger, false, config.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := keyring.NewKey(bytes.Repeat([]byte{4}, keyring.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	f := app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: logger, Jobs: inserter,
		Notifications: notificationService(st, config.Default(), keyring.New(key), insertWith(inserter))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = f.Listener(ln) }()
	t.Cleanup(func() { _ = f.Shutdown() })

	u, team, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{Email: "cli@example.com", Password: "correct horse battery", TeamName: "CLI"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := service.CreateToken(ctx, st, service.Actor{TeamID: team.ID, UserID: u.ID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "cli", Scopes: auth.Strings(auth.AllScopes)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLIPWAY_URL", "http://"+ln.Addr().String())
	t.Setenv("SLIPWAY_TOKEN", secret)
	old := pollInterval
	pollInterval = 20 * time.Millisecond
	t.Cleanup(func() { pollInterval = old })
	return &cliServer{st: st, team: team}
}

// runCLI runs the root command in-process.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		code = exitCode(err)
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), code
}

const cliManifest = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "clinotes"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "example.com/notes:1"

[spec.environments.staging]
`

func writeManifest(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "slipway.toml")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCLI_ApplyDeployWait drives the server verbs against the real app;
// the test plays the worker by advancing deployments in the database.
func TestCLI_ApplyDeployWait(t *testing.T) {
	s := startCLIServer(t)
	ctx := context.Background()

	// An invalid manifest: every error with its position, exit 1.
	bad := writeManifest(t, strings.Replace(cliManifest, `name = "web"`, "name = \"Web_X\"\nreplicas = -1", 1))
	_, stderr, code := runCLI(t, "app", "apply", "--file", bad)
	if code != 1 || !strings.Contains(stderr, "spec.services[0].name: ") || !strings.Contains(stderr, "spec.services[0].replicas: ") ||
		!strings.Contains(stderr, "at line 7 column") || !strings.Contains(stderr, "manifest_validation_failed") {
		t.Fatalf("invalid apply: exit %d stderr %s", code, stderr)
	}

	file := writeManifest(t, cliManifest)
	stdout, stderr, code := runCLI(t, "app", "apply", "--file", file)
	if code != 0 || !strings.Contains(stdout, "application clinotes: created, revision 1") || !strings.Contains(stdout, "created environments: staging") {
		t.Fatalf("apply: exit %d stdout %s stderr %s", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, "app", "apply", "--file", file, "--expected-revision", "7")
	if code == 0 || !strings.Contains(stderr, "generation_conflict") {
		t.Fatalf("stale --expected-revision: exit %d stderr %s", code, stderr)
	}
	stdout, _, code = runCLI(t, "app", "list")
	if code != 0 || !strings.Contains(stdout, "clinotes") {
		t.Fatalf("app list: %d %s", code, stdout)
	}

	// env deploy queues a deployment and a River job for it.
	stdout, stderr, code = runCLI(t, "env", "deploy", "clinotes", "staging")
	if code != 0 || !strings.Contains(stdout, "queued") {
		t.Fatalf("env deploy: exit %d stdout %s stderr %s", code, stdout, stderr)
	}
	first := deploymentIDIn(t, stdout)
	var jobsFor int
	if err := s.st.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'deploy' AND args->>'deployment_id' = $1`, first).Scan(&jobsFor); err != nil || jobsFor != 1 {
		t.Fatalf("river jobs for %s: %d %v", first, jobsFor, err)
	}

	// deployment wait follows it live to success: exit 0 and each step.
	done := make(chan struct{})
	var waitOut, waitErr string
	var waitCode int
	go func() {
		defer close(done)
		waitOut, waitErr, waitCode = runCLI(t, "deployment", "wait", first)
	}()
	// Give the waiter time for its first poll, so it sees the first step
	// start rather than only finished.
	time.Sleep(500 * time.Millisecond)
	s.play(t, first, store.StateSucceeded)
	<-done
	t.Logf("deployment wait printed:\n%s", waitOut)
	if waitCode != 0 || !strings.Contains(waitOut, "started   capture") || !strings.Contains(waitOut, "succeeded capture in") ||
		!strings.Contains(waitOut, "succeeded rollout:web") || !strings.Contains(waitOut, "deployment "+first+" succeeded") {
		t.Fatalf("wait for success: exit %d stdout %s stderr %s", waitCode, waitOut, waitErr)
	}

	// apply --deploy --wait of a failing deployment: non-zero, with the
	// error code, message and failing step.
	changed := writeManifest(t, strings.Replace(cliManifest, "notes:1", "notes:2", 1))
	var applyOut, applyErr string
	var applyCode int
	done = make(chan struct{})
	go func() {
		defer close(done)
		applyOut, applyErr, applyCode = runCLI(t, "app", "apply", "--file", changed, "--deploy", "--wait")
	}()
	second := s.nextDeployment(t, first)
	s.play(t, second, store.StateFailed)
	<-done
	if applyCode != exitDeploymentFailed || !strings.Contains(applyOut, "revision 2") ||
		!strings.Contains(applyErr, "rollout_failed: web never became healthy") || !strings.Contains(applyErr, "failed step rollout:web") {
		t.Fatalf("apply --deploy --wait of a failing deployment: exit %d stdout %s stderr %s", applyCode, applyOut, applyErr)
	}

	// show, status, cancel of a finished one, restore of the good one.
	stdout, _, code = runCLI(t, "deployment", "show", second)
	if code != 0 || !strings.Contains(stdout, "state:       failed") || !strings.Contains(stdout, "deployment.request") {
		t.Fatalf("deployment show: %d %s", code, stdout)
	}
	_, stderr, code = runCLI(t, "deployment", "cancel", second)
	if code == 0 || !strings.Contains(stderr, "deployment_finished") {
		t.Fatalf("cancel finished: %d %s", code, stderr)
	}
	stdout, _, code = runCLI(t, "app", "status", "clinotes", "--env", "staging", "--format", "json")
	if code != 0 || !strings.Contains(stdout, `"docker_unavailable"`) || !strings.Contains(stdout, second) {
		t.Fatalf("status json: %d %s", code, stdout)
	}
	_, stderr, code = runCLI(t, "env", "restore", "clinotes", "production", "--deployment", first)
	if code == 0 || !strings.Contains(stderr, "deployment_environment_mismatch") {
		t.Fatalf("restore into the wrong environment: %d %s", code, stderr)
	}
	stdout, stderr, code = runCLI(t, "env", "restore", "clinotes", "staging", "--deployment", first)
	if code != 0 || !strings.Contains(stdout, "queued") {
		t.Fatalf("restore: %d %s %s", code, stdout, stderr)
	}
	restored, err := s.st.GetDeployment(ctx, s.team.ID, deploymentIDIn(t, stdout))
	if err != nil || restored.Origin != store.OriginRestore || restored.RestoredFrom != first {
		t.Fatalf("restored deployment %+v %v", restored, err)
	}

	// A wait bounded by --timeout gives up with its own exit status.
	_, stderr, code = runCLI(t, "deployment", "wait", restored.ID, "--timeout", "100ms")
	if code != exitWaitTimeout || !strings.Contains(stderr, "wait_timeout") {
		t.Fatalf("wait timeout: %d %s", code, stderr)
	}
	stdout, _, code = runCLI(t, "deployment", "cancel", restored.ID)
	if code != 0 || !strings.Contains(stdout, "cancelled") {
		t.Fatalf("cancel: %d %s", code, stdout)
	}
}

// deploymentIDIn finds the dep_ id in "deployment dep_x of ENV queued".
func deploymentIDIn(t *testing.T, out string) string {
	t.Helper()
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "dep_") {
			return f
		}
	}
	t.Fatalf("no deployment id in %q", out)
	return ""
}

// nextDeployment waits for a deployment newer than after to be requested.
func (s *cliServer) nextDeployment(t *testing.T, after string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ds, err := s.st.ListDeployments(context.Background(), s.team.ID, store.DeploymentFilter{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 1 && ds[0].ID != after {
			return ds[0].ID
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no new deployment was requested")
	return ""
}

var playMu sync.Mutex

// play advances a deployment as the worker would: capture, prepare, then
// the rollout of web, ending in outcome.
func (s *cliServer) play(t *testing.T, id string, outcome store.DeploymentState) {
	t.Helper()
	playMu.Lock()
	defer playMu.Unlock()
	ctx := context.Background()
	var p pipeline.Progress
	step := func(name string, state store.DeploymentState, result, message string) {
		d, err := s.st.GetDeployment(ctx, s.team.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.st.TransitionDeployment(ctx, s.team.ID, id, []store.DeploymentState{d.State}, state); err != nil {
			t.Fatal(err)
		}
		if state == store.StateCapturing {
			if _, err := s.st.RecordCapture(ctx, s.team.ID, id, store.Capture{
				Manifest: []byte(`{}`), Rendered: []byte(`{}`), Variables: []byte(`{}`),
			}); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now()
		st := p.Start(name, now)
		if err := s.st.SetDeploymentSteps(ctx, s.team.ID, id, p.JSON()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * pollInterval) // let the waiter see the running step
		finished := time.Now()
		st.State, st.Message, st.FinishedAt = result, message, &finished
		if err := s.st.SetDeploymentSteps(ctx, s.team.ID, id, p.JSON()); err != nil {
			t.Fatal(err)
		}
	}
	step("capture", store.StateCapturing, pipeline.StepSucceeded, "")
	step("prepare", store.StatePreparing, pipeline.StepSucceeded, "")
	if outcome == store.StateSucceeded {
		step("rollout:web", store.StateRollingOut, pipeline.StepSucceeded, "2/2 replicas healthy")
		if _, err := s.st.TransitionDeployment(ctx, s.team.ID, id, []store.DeploymentState{store.StateRollingOut}, store.StateSucceeded); err != nil {
			t.Fatal(err)
		}
		return
	}
	step("rollout:web", store.StateRollingOut, pipeline.StepFailed, "task exited with code 1")
	if _, err := s.st.FailDeployment(ctx, s.team.ID, id, "rollout_failed", "web never became healthy"); err != nil {
		t.Fatal(err)
	}
}
