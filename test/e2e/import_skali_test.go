package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/pipeline"
	imageresolver "github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// importLabel marks the images this test builds, so a leftover of an
// earlier run can be told from someone else's image of the same tag.
const importLabel = "e2e-import-skali"

// TestImportSkali_RoundTrip imports a skali manifest with an application
// and a database, deploys the translation through the real pipeline on the
// real Swarm, and checks that both services converge: the generated
// database service mounts its generated password secret and passes its
// generated pg_isready health check.
func TestImportSkali_RoundTrip(t *testing.T) {
	ctx := context.Background()
	cli := swarmtest.Client(t)
	id := swarmtest.ID()

	webRef := "slipway-e2e-import/web:" + id
	tagImage(t, cli, swarmtest.Image(t, "web"), webRef)
	source := fmt.Sprintf(`name: imp-%s
applications:
  web:
    image: %s
    environment:
      DATABASE_URL: "{{databases.data.url}}"
      DATABASE_HOST: "{{databases.data.host}}"
    ports:
      http:
        port: 8080
databases:
  data:
    engine: postgres
    version: 17
`, id, webRef)

	res, err := importer.Import(importer.Skali, []byte(source), importer.Options{})
	if err != nil || !res.OK() {
		t.Fatalf("import: %v %v", err, res.Diagnostics)
	}
	m := res.Manifest
	db := service(m, "data")
	if db == nil || len(db.Secrets) != 1 || db.Healthcheck == nil || db.Healthcheck.Type != manifest.HealthcheckCommand {
		t.Fatalf("want a generated database service with a secret and a command health check, got %+v", db)
	}
	// The stand-in answers to exactly the reference the importer emits.
	postgresRef := db.Source.Image
	if !strings.HasPrefix(postgresRef, "postgres:") {
		t.Fatalf("database image %q", postgresRef)
	}
	tagImage(t, cli, fakePostgres(t, cli, id), postgresRef)
	text, err := importer.Encode(m, "toml")
	if err != nil {
		t.Fatal(err)
	}

	p := newPipeline(t, m.Metadata.Name)
	d := p.deploy(t, m, string(text))
	if d.State != store.StateSucceeded {
		t.Fatalf("deployment %s is %s (%s: %s)\nsteps: %s", d.ID, d.State, d.ErrorCode, d.ErrorMessage, d.Steps)
	}

	obs, err := p.driver.Observe(ctx, p.ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web", "data"} {
		s := p.converged(t, obs, name)
		if name == "web" {
			env := s.Spec.TaskTemplate.ContainerSpec.Env
			if !slices.Contains(env, "DATABASE_URL=postgres://data@data:5432/data?sslmode=disable") || !slices.Contains(env, "DATABASE_HOST=data") {
				t.Fatalf("web's database outputs were not rewritten: %v", env)
			}
		}
	}
	if h := healthOf(t, cli, obs, "data"); h != "healthy" {
		t.Fatalf("database container health %q, want healthy (the generated pg_isready check)", h)
	}
}

// converged returns the Swarm service of name, which must run its one
// replica.
func (p *importRun) converged(t *testing.T, obs swarm.Observed, name string) dockerswarm.Service {
	t.Helper()
	i := slices.IndexFunc(obs.Services, func(s dockerswarm.Service) bool { return s.Spec.Labels[swarm.LabelService] == name })
	if i < 0 {
		t.Fatalf("no Swarm service for %s", name)
	}
	st, err := p.driver.ServiceStatus(context.Background(), obs.Services[i])
	if err != nil {
		t.Fatal(err)
	}
	if !st.Converged || st.Running != 1 {
		t.Fatalf("%s did not converge: %+v", name, st)
	}
	return obs.Services[i]
}

func service(m *manifest.Manifest, name string) *manifest.Service {
	for i := range m.Spec.Services {
		if m.Spec.Services[i].Name == name {
			return &m.Spec.Services[i]
		}
	}
	return nil
}

// healthOf is the health status of the running container of a service.
func healthOf(t *testing.T, cli *client.Client, obs swarm.Observed, name string) string {
	t.Helper()
	var svcID string
	for _, s := range obs.Services {
		if s.Spec.Labels[swarm.LabelService] == name {
			svcID = s.ID
		}
	}
	for _, task := range obs.Tasks {
		if task.ServiceID != svcID || task.Status.State != dockerswarm.TaskStateRunning || task.Status.ContainerStatus == nil {
			continue
		}
		c, err := cli.ContainerInspect(context.Background(), task.Status.ContainerStatus.ContainerID)
		if err != nil {
			t.Fatal(err)
		}
		if c.State == nil || c.State.Health == nil {
			return "none"
		}
		return c.State.Health.Status
	}
	return "no running task"
}

// tagImage tags src as ref for the test and untags it afterwards. A ref
// that exists and is not a leftover of this test belongs to someone else:
// the test refuses to overwrite it.
func tagImage(t *testing.T, cli *client.Client, src, ref string) {
	t.Helper()
	ctx := context.Background()
	if got, err := cli.ImageInspect(ctx, ref); err == nil && got.Config != nil && got.Config.Labels[swarmtest.LabelKey] != importLabel && !strings.HasPrefix(ref, "slipway-e2e-import/") {
		t.Fatalf("image %s already exists and is not this test's; remove it to run the round trip", ref)
	}
	if err := cli.ImageTag(ctx, src, ref); err != nil {
		t.Fatalf("tag %s as %s: %v", src, ref, err)
	}
	t.Cleanup(func() {
		// Removing a tag that other tags share only untags it.
		if _, err := cli.ImageRemove(context.Background(), ref, image.RemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			t.Logf("untag %s: %v", ref, err)
		}
	})
}

// fakePostgres builds testdata/images/fakepostgres and derives an image
// that also installs the program as /usr/bin/pg_isready, where the
// importer's generated health check runs it. swarmtest.BuildImage copies
// one file, so the second copy comes from the built image itself.
func fakePostgres(t *testing.T, cli *client.Client, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	base, err := swarmtest.BuildImage(ctx, cli, filepath.Join(swarmtest.ImagesDir(), "fakepostgres"))
	if err != nil {
		t.Fatal(err)
	}
	dockerfile := fmt.Sprintf("FROM %s\nCOPY --from=%s /app /usr/bin/pg_isready\n", base, base)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(tw, dockerfile); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tag := "slipway-e2e-import/fakepostgres:" + id
	resp, err := cli.ImageBuild(ctx, &buf, build.ImageBuildOptions{
		Tags: []string{tag}, Remove: true, ForceRemove: true,
		Labels: map[string]string{swarmtest.LabelKey: importLabel},
	})
	if err != nil {
		t.Fatalf("build %s: %v", tag, err)
	}
	defer resp.Body.Close()
	// The engine answers 200 and reports a failed build in the stream.
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct{ Error string }
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("build %s: %v", tag, err)
		}
		if msg.Error != "" {
			t.Fatalf("build %s: %s", tag, msg.Error)
		}
	}
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), tag, image.RemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			t.Logf("remove %s: %v", tag, err)
		}
	})
	return tag
}

// importRun is the real deployment pipeline over a fresh schema, the local
// Swarm and a test keyring; it deploys into one environment.
type importRun struct {
	st       *store.Store
	driver   *swarm.Driver
	pipeline *pipeline.Pipeline
	team     store.Team
	app      store.Application
	env      store.Environment
	ref      swarm.EnvRef
}

func newPipeline(t *testing.T, appName string) *importRun {
	t.Helper()
	ctx := context.Background()
	cli := swarmtest.Client(t)
	st := storetest.NewSchema(t)
	raw := make([]byte, keyring.KeySize)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	key, err := keyring.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := &importRun{st: st, driver: swarm.NewDriver(cli, nil)}
	id := swarmtest.ID()
	if p.team, err = st.CreateTeam(ctx, "Import "+id, "import-"+id); err != nil {
		t.Fatal(err)
	}
	if p.app, err = st.CreateApplication(ctx, p.team.ID, appName); err != nil {
		t.Fatal(err)
	}
	if p.env, err = st.CreateEnvironment(ctx, p.team.ID, store.EnvironmentParams{
		ApplicationID: p.app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production",
	}); err != nil {
		t.Fatal(err)
	}
	p.pipeline = &pipeline.Pipeline{
		Store:              st,
		Driver:             p.driver,
		Images:             imageresolver.NewResolver(cli, false),
		Secrets:            secrets.NewSource(st, keyring.New(key)),
		ConvergenceTimeout: 90 * time.Second,
		// One deployment is advanced by hand; nothing follows it (no Queue).
	}
	p.ref = swarm.EnvRef{ID: p.env.ID, ShortID: store.ShortID(p.env.ID)}
	swarmtest.RemoveOnCleanup(t, swarm.LabelEnv+"="+p.env.ID)
	return p
}

// deploy saves m as the application's next revision and advances a
// deployment of it to the end, as the worker would.
func (p *importRun) deploy(t *testing.T, m *manifest.Manifest, source string) store.Deployment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := p.st.CreateManifestRevision(ctx, p.team.ID, p.app.ID, store.RevisionParams{Manifest: raw, Source: source, Author: "test"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.st.CreateDeployment(ctx, p.team.ID, store.DeploymentParams{
		EnvironmentID: p.env.ID, Revision: rev.Revision, Origin: store.OriginBuild, Actor: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.pipeline.Advance(ctx, p.team.ID, d.ID); err != nil {
		t.Fatalf("advance %s: %v", d.ID, err)
	}
	if d, err = p.st.GetDeployment(ctx, p.team.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	return d
}
