package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestSecrets_StoredSecretReachesContainerAsFile sets a stored secret
// through the service, deploys a manifest mounting it with the real
// pipeline on the real Swarm, and reads the file back from a
// before-rollout job's output. The value must appear in no service's
// `docker service inspect`, in no deployment step or error, and in no log
// line the pipeline wrote.
// secretsBundle is one application with one environment, on a real
// database and the real Swarm, with the deploy pipeline mounting secrets
// from a keyring-backed secret service.
type secretsBundle struct {
	st       *store.Store
	cli      *client.Client
	svc      *secrets.Service
	pipeline *pipeline.Pipeline
	team     store.Team
	app      store.Application
	env      store.Environment
	logs     *bytes.Buffer
}

func setupSecrets(t *testing.T) *secretsBundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	cli := swarmtest.Client(t)
	driver := swarm.NewDriver(cli, nil)
	id := swarmtest.ID()
	b := &secretsBundle{st: st, cli: cli, logs: &bytes.Buffer{}}
	var err error
	b.team, err = st.CreateTeam(ctx, "Secrets "+id, "secrets-"+id)
	secretsMust(t, err)
	b.app, err = st.CreateApplication(ctx, b.team.ID, "secrets-"+id)
	secretsMust(t, err)
	b.env, err = st.CreateEnvironment(ctx, b.team.ID, store.EnvironmentParams{
		ApplicationID: b.app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production",
	})
	secretsMust(t, err)
	swarmtest.RemoveOnCleanup(t, swarm.LabelEnv+"="+b.env.ID)
	keyText, err := keyring.Generate()
	secretsMust(t, err)
	kr, err := keyring.Parse([]byte(keyText))
	secretsMust(t, err)
	b.svc = secrets.New(st, kr)
	b.pipeline = &pipeline.Pipeline{
		Store:              st,
		Driver:             driver,
		Images:             image.NewResolver(cli, false),
		Secrets:            secrets.NewSource(st, kr),
		ConvergenceTimeout: 90 * time.Second,
		Metrics:            metrics.New(nil),
		Log:                slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	return b
}

// deploy saves doc as a new revision and runs a deployment of it to the
// end, as the worker would; it must succeed.
func (b *secretsBundle) deploy(t *testing.T, doc string, stored ...string) store.Deployment {
	t.Helper()
	ctx := context.Background()
	m, err := manifest.Decode([]byte(doc), "toml")
	secretsMust(t, err)
	if errs := manifest.Validate(m, manifest.ValidateOptions{StoredSecretNames: stored}); len(errs) > 0 {
		t.Fatalf("manifest invalid: %v", errs)
	}
	raw, err := json.Marshal(m)
	secretsMust(t, err)
	rev, err := b.st.CreateManifestRevision(ctx, b.team.ID, b.app.ID, store.RevisionParams{Manifest: raw, Source: doc, Author: "test"})
	secretsMust(t, err)
	d, err := b.st.CreateDeployment(ctx, b.team.ID, store.DeploymentParams{
		EnvironmentID: b.env.ID, Revision: rev.Revision, Origin: store.OriginBuild, Actor: "test",
	})
	secretsMust(t, err)
	return b.advance(t, d.ID)
}

// advance runs every remaining step of deployment id, as the worker
// would; it must succeed.
func (b *secretsBundle) advance(t *testing.T, id string) store.Deployment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := b.pipeline.Advance(ctx, b.team.ID, id); err != nil {
		t.Fatalf("advance: %v", err)
	}
	d, err := b.st.GetDeployment(ctx, b.team.ID, id)
	secretsMust(t, err)
	if d.State != store.StateSucceeded {
		t.Fatalf("deployment %s (%s: %s)\nsteps: %s", d.State, d.ErrorCode, d.ErrorMessage, d.Steps)
	}
	return d
}

// jobOutput is what the deployment's job "show" printed.
func jobOutput(t *testing.T, d store.Deployment) string {
	t.Helper()
	progress, err := pipeline.ParseProgress(d.Steps)
	secretsMust(t, err)
	step := progress.Find("job:show")
	if step == nil {
		t.Fatalf("no job:show step: %s", d.Steps)
	}
	return step.Output
}

// showManifest runs the job image as service api mounting name at
// /run/secrets/name, and a before-rollout job "show" printing that file.
func showManifest(appName, jobImage, name, declarations string) string {
	return fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "api"
command = ["/app", "--sleep", "3600"]
secrets = [{ name = %q, target = "/run/secrets/%s" }]
[spec.services.source]
type = "image"
image = %q

[[spec.jobs]]
name = "show"
service = "api"
command = ["/app", "--cat", "/run/secrets/%s"]
%s`, appName, name, name, jobImage, name, declarations)
}

// TestSecrets_StoredSecretReachesContainerAsFile sets a stored secret
// through the service, deploys a manifest mounting it with the real
// pipeline on the real Swarm, and reads the file back from a
// before-rollout job's output. The value must appear in no service's
// `docker service inspect`, in no deployment step or error, and in no log
// line the pipeline wrote.
func TestSecrets_StoredSecretReachesContainerAsFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupSecrets(t)

	// Random, so a match anywhere can only come from this value.
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	value := "pw-" + hex.EncodeToString(rnd[:])
	if _, err := b.svc.Set(ctx, b.team.ID, b.app.ID, "db-password", []byte(value), "test"); err != nil {
		t.Fatal(err)
	}
	d := b.deploy(t, showManifest(b.app.Name, swarmtest.Image(t, "job"), "db-password", ""), "db-password")

	// The job printed "PATH MODE CONTENT": the file holds exactly the value.
	out := jobOutput(t, d)
	if !strings.Contains(out, "/run/secrets/db-password ") || !strings.HasSuffix(strings.TrimSpace(out), " "+value) {
		t.Fatalf("job output %q, want the file with the stored value", out)
	}

	// Nothing but the job's own output carries the value: blank it out of
	// the steps, then nothing of the deployment, Docker or the logs may.
	steps := strings.ReplaceAll(string(d.Steps), out, "")
	steps = strings.ReplaceAll(steps, jsonEscaped(out), "")
	if strings.Contains(steps, value) || strings.Contains(d.ErrorMessage, value) {
		t.Errorf("the deployment's steps contain the value outside the job's output: %s", d.Steps)
	}
	if strings.Contains(b.logs.String(), value) {
		t.Errorf("the pipeline's log contains the value:\n%s", b.logs.String())
	}
	list, err := b.cli.ServiceList(ctx, dockerswarm.ServiceListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+b.env.ID)),
	})
	secretsMust(t, err)
	if len(list) == 0 {
		t.Fatal("the environment has no services")
	}
	for _, s := range list {
		_, inspect, err := b.cli.ServiceInspectWithRaw(ctx, s.ID, dockerswarm.ServiceInspectOptions{})
		secretsMust(t, err)
		if bytes.Contains(inspect, []byte(value)) {
			t.Errorf("docker service inspect %s shows the value", s.Spec.Name)
		}
		if s.Spec.Labels[swarm.LabelService] == "api" && !bytes.Contains(inspect, []byte(`"File":{"Name":"db-password"`)) {
			t.Errorf("service %s does not mount db-password as a secret file: %s", s.Spec.Name, inspect)
		}
	}
	// A Swarm secret's data is write-only in Docker too; its spec names it.
	secretsList, err := b.cli.SecretList(ctx, dockerswarm.SecretListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+b.env.ID)),
	})
	secretsMust(t, err)
	for _, s := range secretsList {
		if strings.Contains(string(s.Spec.Data), value) {
			t.Errorf("docker secret inspect %s shows the value", s.Spec.Name)
		}
	}
}

// TestSecrets_GeneratedKeepsValueUntilRegenerate: a generated secret is
// the same file in a second deployment, and a new one only in the
// deployment after Regenerate.
func TestSecrets_GeneratedKeepsValueUntilRegenerate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupSecrets(t)
	doc := showManifest(b.app.Name, swarmtest.Image(t, "job"), "session-key",
		"\n[[spec.secrets]]\nname = \"session-key\"\ngenerate = { type = \"random\", bytes = 24 }\n")
	value := func(d store.Deployment) string {
		t.Helper()
		out := strings.TrimSpace(jobOutput(t, d))
		fields := strings.Fields(out)
		// "PATH MODE CONTENT": 24 random bytes as hex are 48 characters.
		if len(fields) != 3 || fields[0] != "/run/secrets/session-key" || len(fields[2]) != 48 {
			t.Fatalf("job output %q, want the generated file", out)
		}
		return fields[2]
	}
	first := value(b.deploy(t, doc))
	// A second deployment (a changed manifest, so it really redeploys).
	second := value(b.deploy(t, strings.Replace(doc, `"--sleep", "3600"`, `"--sleep", "3601"`, 1)))
	if second != first {
		t.Fatalf("the generated value changed without regenerate: %s then %s", first, second)
	}
	if _, err := b.svc.Regenerate(ctx, b.team.ID, b.env.ID, "session-key"); err != nil {
		t.Fatal(err)
	}
	third := value(b.deploy(t, doc))
	if third == first {
		t.Fatalf("regenerate kept the value %s", first)
	}
	gen, err := b.svc.Generated(ctx, b.team.ID, b.env.ID)
	secretsMust(t, err)
	if len(gen) != 1 || gen[0].CurrentVersion != 2 || gen[0].Regenerate {
		t.Fatalf("generated metadata after regenerate: %+v", gen)
	}
	if strings.Contains(b.logs.String(), first) || strings.Contains(b.logs.String(), third) {
		t.Errorf("the pipeline's log contains a generated value")
	}
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func secretsMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
