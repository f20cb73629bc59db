package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// TestImportCompose_RoundTrip imports a Docker Compose file, deploys the
// translation through the real pipeline on the real Swarm, and checks what
// Compose would have run: the one-off service a dependency waits for runs
// to completion first (as a job, keeping the image's ENTRYPOINT), the web
// service starts once the database's command check passes, its
// interpolated environment renders with the variables' defaults, its HTTP
// probe (written as a CMD-SHELL wget) passes, and the config is mounted
// with its content.
func TestImportCompose_RoundTrip(t *testing.T) {
	ctx := context.Background()
	cli := swarmtest.Client(t)
	id := swarmtest.ID()

	webRef := "slipway-e2e-import/web:" + id
	tagImage(t, cli, swarmtest.Image(t, "web"), webRef)
	jobRef := "slipway-e2e-import/job:" + id
	tagImage(t, cli, swarmtest.Image(t, "job"), jobRef)
	source := fmt.Sprintf(`name: imp-compose-%s
services:
  web:
    image: %s
    environment:
      DATABASE_HOST: ${DB_HOST:-db}
      PRICE: "$$5"
    depends_on:
      db:
        condition: service_healthy
      migrate:
        condition: service_completed_successfully
    healthcheck:
      test: ["CMD-SHELL", "wget -qO- http://localhost:8080/health || exit 1"]
      interval: 5s
      timeout: 3s
    configs:
      - source: motd
        target: /etc/motd
    volumes:
      - uploads:/srv/uploads
  db:
    image: postgres:17
    healthcheck:
      test: ["CMD", "pg_isready"]
      interval: 5s
  migrate:
    image: %s
    command: ["--print", "migrated ${REGION:-eu}"]
configs:
  motd:
    content: "Welcome to ${SHOP:-the shop}"
volumes:
  uploads:
`, id, webRef, jobRef)

	res, err := importer.Import(importer.Compose, []byte(source), importer.Options{})
	if err != nil || !res.OK() {
		t.Fatalf("import: %v %v", err, res.Diagnostics)
	}
	m := res.Manifest
	web := service(m, "web")
	if web == nil || web.Healthcheck == nil || web.Healthcheck.Type != manifest.HealthcheckHTTP || len(m.Spec.Jobs) != 1 {
		t.Fatalf("want web with an HTTP check and one job, got %+v jobs %+v", web, m.Spec.Jobs)
	}
	// The stand-in answers to exactly the reference the importer emits.
	tagImage(t, cli, fakePostgres(t, cli, id), service(m, "db").Source.Image)
	text, err := importer.Encode(m, "toml")
	if err != nil {
		t.Fatal(err)
	}

	p := newPipeline(t, m.Metadata.Name)
	d := p.deploy(t, m, string(text))
	if d.State != store.StateSucceeded {
		t.Fatalf("deployment %s is %s (%s: %s)\nsteps: %s", d.ID, d.State, d.ErrorCode, d.ErrorMessage, d.Steps)
	}
	var steps []struct{ Name, State, Output string }
	if err := json.Unmarshal(d.Steps, &steps); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(steps, func(s struct{ Name, State, Output string }) bool {
		return strings.Contains(s.Output, "migrated eu")
	}) {
		t.Fatalf("the migrate job did not print its interpolated argument: %s", d.Steps)
	}

	obs, err := p.driver.Observe(ctx, p.ref)
	if err != nil {
		t.Fatal(err)
	}
	p.converged(t, obs, "db")
	cs := p.converged(t, obs, "web").Spec.TaskTemplate.ContainerSpec
	if !slices.Contains(cs.Env, "DATABASE_HOST=db") || !slices.Contains(cs.Env, "PRICE=$5") {
		t.Fatalf("web's environment did not render with the defaults: %v", cs.Env)
	}
	found := false
	for _, c := range cs.Configs {
		if c.File == nil || c.File.Name != "/etc/motd" {
			continue
		}
		cfg, _, err := cli.ConfigInspectWithRaw(ctx, c.ConfigID)
		if err != nil {
			t.Fatal(err)
		}
		found = string(cfg.Spec.Data) == "Welcome to the shop"
	}
	if !found {
		t.Fatalf("web does not mount /etc/motd with the config's content: %+v", cs.Configs)
	}
	for _, name := range []string{"db", "web"} {
		if h := healthOf(t, cli, obs, name); h != "healthy" {
			t.Fatalf("%s container health %q, want healthy", name, h)
		}
	}
}
