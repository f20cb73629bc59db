package security

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
	"github.com/slipwayhq/slipway/test/summary"
)

// observedStatus is the API's status view over the real Swarm, as serve
// wires it (cmd/slipway/runtime_status.go), reduced to what a response
// carries.
type observedStatus struct{ driver *swarm.Driver }

func (o observedStatus) ServiceStatus(ctx context.Context, envID string) ([]api.ServiceStatus, error) {
	obs, err := o.driver.Observe(ctx, swarm.EnvRef{ID: envID, ShortID: store.ShortID(envID)})
	if err != nil {
		return nil, err
	}
	var out []api.ServiceStatus
	for _, st := range swarm.States(obs) {
		out = append(out, api.ServiceStatus{Service: st.Service, Name: st.Name, Image: st.Image, Deployment: st.Deployment,
			Desired: st.Desired, Running: st.Running, UpdateState: st.UpdateState, LastError: st.Reason})
	}
	return out, nil
}

// scanner looks for secret values in every output it is shown.
type scanner struct {
	t       *testing.T
	needles map[string]string // encoded form -> description
	scanned int
	hits    int
}

// add registers value in raw, hex and base64 forms.
func (s *scanner) add(name string, value []byte) {
	forms := map[string]string{
		"raw":          string(value),
		"hex":          hex.EncodeToString(value),
		"HEX":          strings.ToUpper(hex.EncodeToString(value)),
		"base64":       base64.StdEncoding.EncodeToString(value),
		"base64 raw":   base64.RawStdEncoding.EncodeToString(value),
		"base64url":    base64.RawURLEncoding.EncodeToString(value),
		"JSON bytes":   strings.Trim(string(mustJSON(value)), `"`), // []byte marshals as base64
		"JSON escaped": strings.Trim(string(mustJSON(string(value))), `"`),
	}
	for form, v := range forms {
		if len(v) >= 8 {
			s.needles[v] = name + " (" + form + ")"
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// found lists the secret forms text contains.
func (s *scanner) found(text string) []string {
	var out []string
	for needle, what := range s.needles {
		if strings.Contains(text, needle) {
			out = append(out, what)
		}
	}
	return out
}

func (s *scanner) scan(where, text string) {
	s.t.Helper()
	s.scanned++
	for _, what := range s.found(text) {
		s.hits++
		s.t.Errorf("%s shows %s", where, what)
	}
}

// selfCheck is the scanner's positive control: each value, embedded in
// other text in each encoding, must be found.
func (s *scanner) selfCheck(values map[string][]byte) {
	s.t.Helper()
	for name, v := range values {
		for _, text := range []string{
			"x" + string(v) + "x",
			`{"data":` + string(mustJSON(v)) + `}`,
			"\\x" + hex.EncodeToString(v),
			"a=" + base64.URLEncoding.EncodeToString(v),
		} {
			if len(s.found(text)) == 0 {
				s.t.Fatalf("the scanner misses %s in %q", name, text)
			}
		}
	}
}

// TestSecrets_NeverShown sets a stored and a generated secret, deploys them
// on the real Swarm through the real pipeline (a success, a failing
// deployment, and the automatic rollback that restores the first), then
// scans every API response and dashboard page of the application, every
// row of every table, the pipeline's log, and the raw `docker service
// inspect` of every service for the values.
func TestSecrets_NeverShown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	cli := swarmtest.Client(t)
	// One logger for the pipeline and the driver, as the worker wires them.
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	driver := swarm.NewDriver(cli, logger)
	keyText, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.Parse([]byte(keyText))
	if err != nil {
		t.Fatal(err)
	}
	svc := secrets.New(st, kr)
	runtime := observedStatus{driver: driver}

	previews := &service.Previews{Store: st, Limits: service.PreviewLimits{MaxPerApplication: 5, MaxTotal: 50}}
	s := newSiteOn(t, st, app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: slog.New(slog.DiscardHandler), Runtime: runtime, Previews: previews}))
	s.apiApp = fiber.New()
	api.Register(s.apiApp.Group("/api/v1"), api.Config{Store: st, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Runtime: runtime, Secrets: svc, Previews: previews})

	id := swarmtest.ID()
	application, err := st.CreateApplication(ctx, s.team.ID, "sec-"+id)
	if err != nil {
		t.Fatal(err)
	}
	env, err := st.CreateEnvironment(ctx, s.team.ID, store.EnvironmentParams{
		ApplicationID: application.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production",
	})
	if err != nil {
		t.Fatal(err)
	}
	swarmtest.RemoveOnCleanup(t, swarm.LabelEnv+"="+env.ID)

	sc := &scanner{t: t, needles: map[string]string{}}
	var rnd [16]byte
	_, _ = rand.Read(rnd[:])
	stored := "s3cr3t-" + hex.EncodeToString(rnd[:])
	sc.add("stored secret", []byte(stored))
	if _, err := svc.Set(ctx, s.team.ID, application.ID, "db-password", []byte(stored), "user:"+s.user.ID); err != nil {
		t.Fatal(err)
	}

	var enqueued []jobs.DeployArgs
	pipeline := &jobs.Pipeline{
		Store:              st,
		Driver:             driver,
		Images:             image.NewResolver(cli, false),
		Secrets:            secrets.NewSource(st, kr),
		ConvergenceTimeout: 90 * time.Second,
		Metrics:            metrics.New(nil),
		Log:                logger,
		Enqueue: func(_ context.Context, _ *store.Store, args river.JobArgs) error {
			enqueued = append(enqueued, args.(jobs.DeployArgs))
			return nil
		},
	}
	web := swarmtest.Image(t, "web")
	good := fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.secrets]]
name = "session-key"
generate = { type = "random", bytes = 32 }

[[spec.services]]
name = "web"
secrets = [
  { name = "db-password", target = "/run/secrets/db-password" },
  { name = "session-key", target = "/run/secrets/session-key" },
]
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
VERSION = "one"
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 1
timeout_seconds = 1
retries = 2

[spec.environments.production]
rollback = "automatic"
`, application.Name, web)
	deploy := func(doc string) store.Deployment {
		t.Helper()
		m, err := manifest.Decode([]byte(doc), "toml")
		if err != nil {
			t.Fatal(err)
		}
		if errs := manifest.Validate(m, manifest.ValidateOptions{StoredSecretNames: []string{"db-password"}}); len(errs) > 0 {
			t.Fatalf("manifest invalid: %v", errs)
		}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		rev, err := st.CreateManifestRevision(ctx, s.team.ID, application.ID, store.RevisionParams{Manifest: raw, Source: doc, Author: "test"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := st.CreateDeployment(ctx, s.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: rev.Revision, Origin: store.OriginBuild, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return advance(t, pipeline, st, s.team.ID, d.ID)
	}

	first := deploy(good)
	wantDeployState(t, first, store.StateSucceeded)
	// The generated value exists only now; open it the way the worker does.
	generated := capturedValues(t, svc, s.team.ID, env, first)
	if len(generated) < 2 {
		t.Fatalf("captured %d secret values, want db-password and session-key", len(generated))
	}
	for name, v := range generated {
		sc.add(name, v.Value)
	}
	if string(generated["db-password"].Value) != stored {
		t.Fatal("the deployment captured a different db-password value")
	}

	second := deploy(strings.Replace(good, `VERSION = "one"`, "VERSION = \"two\"\nHEALTHY = \"false\"", 1))
	wantDeployState(t, second, store.StateFailed)
	if len(enqueued) != 1 {
		t.Fatalf("want one rollback queued after the failure, got %v", enqueued)
	}
	restore := advance(t, pipeline, st, s.team.ID, enqueued[0].DeploymentID)
	wantDeployState(t, restore, store.StateSucceeded)
	if restore.RestoredFrom != first.ID {
		t.Fatalf("rollback restored %s, want %s", restore.RestoredFrom, first.ID)
	}

	sc.selfCheck(map[string][]byte{"db-password": generated["db-password"].Value, "session-key": generated["session-key"].Value})

	// Every GET route of the API and the dashboard, aimed at this
	// application and each of its deployments.
	// A preview of the application, so the preview pages are scanned too.
	preview, err := st.CreateEnvironment(ctx, s.team.ID, store.EnvironmentParams{
		ApplicationID: application.ID, Kind: store.KindPreview, Name: "sec-preview", Slug: "sec-preview", Branch: "feature",
	})
	if err != nil {
		t.Fatal(err)
	}
	apiFill := map[string]string{"app": application.Name, "env": env.Name, "environment": env.ID, "name": "db-password", "service": "web", "slug": preview.Slug}
	pageFill := map[string]string{"app": application.ID, "env": env.Name, "environment": env.ID, "name": "db-password", "service": "web", "slug": preview.Slug}
	scanRoutes(t, sc, s, apiFill, pageFill, []string{first.ID, second.ID, restore.ID})

	// Every row of every table, as text.
	scanTables(t, sc, st)

	sc.scan("pipeline log", logs.String())
	t.Logf("pipeline and driver logged %d bytes", logs.Len())

	// docker service inspect, raw, for every service of the environment.
	list, err := cli.ServiceList(ctx, dockerswarm.ServiceListOptions{Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+env.ID))})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("no services to inspect")
	}
	for _, sv := range list {
		_, raw, err := cli.ServiceInspectWithRaw(ctx, sv.ID, dockerswarm.ServiceInspectOptions{InsertDefaults: true})
		if err != nil {
			t.Fatal(err)
		}
		sc.scan("docker service inspect "+sv.Spec.Name, string(raw))
	}

	summary.Line(t, "secrets: %d hits in %d scanned outputs", sc.hits, sc.scanned)
}

func advance(t *testing.T, p *jobs.Pipeline, st *store.Store, teamID, id string) store.Deployment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := p.Advance(ctx, teamID, id); err != nil {
		t.Fatalf("advance %s: %v", id, err)
	}
	d, err := st.GetDeployment(ctx, teamID, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func wantDeployState(t *testing.T, d store.Deployment, want store.DeploymentState) {
	t.Helper()
	if d.State != want {
		t.Fatalf("deployment %s is %s (%s: %s), want %s", d.ID, d.State, d.ErrorCode, d.ErrorMessage, want)
	}
}

// capturedValues opens the secret versions deployment d pinned.
func capturedValues(t *testing.T, svc *secrets.Service, teamID string, env store.Environment, d store.Deployment) map[string]swarm.SecretValue {
	t.Helper()
	progress, err := jobs.ParseProgress(d.Steps)
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]string{}
	if c := progress.Find("capture"); c != nil {
		for k, v := range c.Detail {
			if name, ok := strings.CutPrefix(k, "secret:"); ok {
				pinned[name] = v
			}
		}
	}
	values, err := svc.Values(context.Background(), teamID, env, pinned)
	if err != nil {
		t.Fatal(err)
	}
	return values
}

var routeParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// scanRoutes requests every GET route of the API and the dashboard with
// fill's values, once per deployment id for routes naming one.
// The API addresses applications by name, the dashboard by id.
func scanRoutes(t *testing.T, sc *scanner, s *site, apiFill, pageFill map[string]string, deployments []string) {
	t.Helper()
	seen := 0
	walk := func(f *fiber.App, fill map[string]string, get func(path string) (int, string)) {
		for _, rt := range f.GetRoutes(true) {
			// The dashboard app also mounts the API; it is walked through
			// apiApp, which has the secret store.
			if rt.Method != http.MethodGet || strings.HasPrefix(rt.Path, "/static") || f == s.f && strings.HasPrefix(rt.Path, "/api/") {
				continue
			}
			ids := []string{""}
			if strings.Contains(rt.Path, ":deployment") {
				ids = deployments
			}
			for _, dep := range ids {
				missing := ""
				path := routeParam.ReplaceAllStringFunc(rt.Path, func(m string) string {
					name := m[1:]
					if name == "deployment" {
						return dep
					}
					v, ok := fill[name]
					if !ok {
						missing = name
					}
					return v
				})
				if missing != "" {
					t.Logf("not scanned: GET %s (no value for :%s)", rt.Path, missing)
					continue
				}
				status, body := get(path)
				if status >= 500 {
					t.Errorf("GET %s: %d %s", path, status, body)
				}
				if status != http.StatusOK {
					t.Logf("GET %s: %d %.200s", path, status, body)
				}
				sc.scan("GET "+path, body)
				seen++
			}
		}
	}
	apiGet := func(path string) (int, string) { r := s.api(t, http.MethodGet, path, ""); return r.status, r.raw }
	walk(s.apiApp, apiFill, apiGet)
	// GET /applications/:app takes only the id (the other API routes take
	// either), so the API is walked by id too.
	walk(s.apiApp, pageFill, apiGet)
	walk(s.f, pageFill, func(path string) (int, string) {
		r := s.get(t, path)
		return r.status, r.body
	})
	if seen < 20 {
		t.Errorf("scanned only %d routes", seen)
	}
}

// scanTables dumps every row of every table in the database as text.
func scanTables(t *testing.T, sc *scanner, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	rows, err := st.Pool().Query(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("only %d tables: %v", len(tables), tables)
	}
	for _, table := range tables {
		rows, err := st.Pool().Query(ctx, `SELECT t::text FROM `+table+` t`)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		sc.scan("table "+table, strings.Join(texts, "\n"))
	}
}
