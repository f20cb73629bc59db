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
	"maps"
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
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/pipeline"
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
// carries and what a promotion checks of its source.
type observedStatus struct{ driver *swarm.Driver }

func (o observedStatus) ServiceStatus(ctx context.Context, envID string) ([]api.ServiceStatus, error) {
	obs, err := o.driver.Observe(ctx, swarm.EnvRef{ID: envID, ShortID: store.ShortID(envID)})
	if err != nil {
		return nil, err
	}
	var out []api.ServiceStatus
	for _, st := range swarm.States(obs) {
		health := "starting"
		switch {
		case st.Failed:
			health = "failed"
		case st.Converged:
			health = "healthy"
		}
		out = append(out, api.ServiceStatus{Service: st.Service, Name: st.Name, Image: st.Image, Deployment: st.Deployment,
			Desired: st.Desired, Running: st.Running, Health: health, UpdateState: st.UpdateState, LastError: st.Reason})
	}
	return out, nil
}

// scanner looks for secret values in every output it is shown, and
// notes which outputs carry each marker, a value that is not secret.
type scanner struct {
	t        *testing.T
	needles  map[string]string // encoded form -> description
	scanned  int
	hits     int
	markers  []string
	carriers map[string][]string // marker -> where it was seen
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
	for _, m := range s.markers {
		if strings.Contains(text, m) {
			s.carriers[m] = append(s.carriers[m], where)
		}
	}
	for _, what := range s.found(text) {
		s.hits++
		s.t.Errorf("%s shows %s", where, what)
	}
}

// wantCarried fails the test unless an output whose description starts
// with prefix carried marker.
func (s *scanner) wantCarried(marker, prefix string) {
	s.t.Helper()
	for _, where := range s.carriers[marker] {
		if strings.HasPrefix(where, prefix) {
			return
		}
	}
	s.t.Errorf("no scanned output %q… carried %q, so a secret there would go unnoticed; carriers: %v", prefix, marker, s.carriers[marker])
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

// TestSecrets_NeverShown sets stored and generated secrets and deploys
// them on the real Swarm through the real pipeline: a success, a failing
// deployment and the automatic rollback that restores the first; a
// promotion of staging to production through the API, and one refused
// with secrets_unavailable (API and dashboard); a preview whose first
// deployment fails with secret_access_denied and whose redeployment mounts
// a stored secret allowing previews. Then it scans every response of
// those steps, every GET route of the API and the dashboard aimed at both
// applications, their environments, preview and deployments, every row of
// every table, the captured log of the pipeline, driver, API and
// dashboard, and the raw `docker service inspect` of every service for
// the values. A canary in a plain environment variable must turn up in
// those outputs, so they are shown to carry what a leak would.
func TestSecrets_NeverShown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	cli := swarmtest.Client(t)
	// One logger for the pipeline, the driver, the API and the dashboard.
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
	// What the API and the dashboard queue, advanced here by the pipeline.
	q := &recordingJobs{}

	previews := &service.Previews{Store: st, Limits: service.PreviewLimits{MaxPerApplication: 5, MaxTotal: 50}}
	// Notification destinations, with their sealed URLs and passwords.
	notifications := &notify.Service{Store: st, Keyring: kr, Emitter: &notify.Emitter{PublicURL: "https://slipway.example.com/",
		Enqueue: func(context.Context, *store.Store, string, string) error { return nil }}}
	s := newSiteOn(t, st, app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: logger, Jobs: q, Runtime: runtime, Logs: runtime, Secrets: svc, Previews: previews, Notifications: notifications}))
	s.apiApp = fiber.New()
	api.Register(s.apiApp.Group("/api/v1"), api.Config{Store: st, Logger: logger, Now: time.Now, Jobs: q, Runtime: runtime, Logs: runtime, Secrets: svc, Previews: previews, Notifications: notifications})

	id := swarmtest.ID()
	application, err := st.CreateApplication(ctx, s.team.ID, "sec-"+id)
	if err != nil {
		t.Fatal(err)
	}
	staging, err := st.CreateEnvironment(ctx, s.team.ID, store.EnvironmentParams{
		ApplicationID: application.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "staging",
	})
	if err != nil {
		t.Fatal(err)
	}
	env, err := st.CreateEnvironment(ctx, s.team.ID, store.EnvironmentParams{
		ApplicationID: application.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production", PromoteFrom: staging.ID,
	})
	if err != nil {
		t.Fatal(err)
	}
	swarmtest.RemoveOnCleanup(t, swarm.LabelEnv+"="+env.ID)
	swarmtest.RemoveOnCleanup(t, swarm.LabelEnv+"="+staging.ID)

	stored, pvStored, canary := distinctive("s3cr3t-"), distinctive("pv-s3cr3t-"), distinctive("canary-")
	// The web image prints "listening on" at start: the logs pages carry it.
	const started = "listening on"
	sc := &scanner{t: t, needles: map[string]string{}, markers: []string{canary, started}, carriers: map[string][]string{}}
	sc.add("stored secret", []byte(stored))
	sc.add("preview's stored secret", []byte(pvStored))
	if _, err := svc.Set(ctx, s.team.ID, application.ID, "db-password", []byte(stored), "user:"+s.user.ID); err != nil {
		t.Fatal(err)
	}
	// The team's other write-only credentials: a registry password, a
	// Slack URL (its path is the credential) and an SMTP password.
	registryPassword, slackPath, smtpPassword := distinctive("reg-pw-"), distinctive("slack-path-"), distinctive("smtp-pw-")
	sc.add("registry password", []byte(registryPassword))
	sc.add("Slack URL's path", []byte(slackPath))
	sc.add("SMTP password", []byte(smtpPassword))
	if _, err := svc.SetRegistryCredential(ctx, s.team.ID, "registry.scan.example", "robot", []byte(registryPassword), "user:"+s.user.ID); err != nil {
		t.Fatal(err)
	}
	slack, _, err := notifications.Create(ctx, s.team.ID, notify.Input{Name: ptr("ops"), Kind: ptr(notify.KindSlack),
		URL: ptr("https://hooks.slack.example/services/" + slackPath)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := notifications.Create(ctx, s.team.ID, notify.Input{Name: ptr("mail"), Kind: ptr(notify.KindEmail),
		SMTPHost: ptr("smtp.scan.example"), SMTPPort: ptr(587), SMTPUsername: ptr("robot"), SMTPPassword: ptr(smtpPassword),
		From: ptr("slipway@scan.example"), To: &[]string{"ops@scan.example"}}); err != nil {
		t.Fatal(err)
	}

	var enqueued []jobs.DeployArgs
	p := &pipeline.Pipeline{
		Store:              st,
		Driver:             driver,
		Images:             image.NewResolver(cli, false),
		Secrets:            secrets.NewSource(st, kr),
		AllowFileURLs:      true, // the preview's repository is file://
		ConvergenceTimeout: 90 * time.Second,
		Metrics:            metrics.New(nil),
		Log:                logger,
		Queue: jobs.Queue{Enqueue: func(_ context.Context, _ *store.Store, args river.JobArgs) error {
			enqueued = append(enqueued, args.(jobs.DeployArgs))
			return nil
		}},
	}
	advanceID := func(depID string) store.Deployment { return advance(t, p, st, s.team.ID, depID) }
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
CANARY = %q
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5

[spec.environments.production]
rollback = "automatic"
`, application.Name, web, canary)
	deploy := func(target store.Environment, doc string) store.Deployment {
		t.Helper()
		rev := saveManifest(t, st, s.team.ID, application.ID, doc)
		d, err := st.CreateDeployment(ctx, s.team.ID, store.DeploymentParams{EnvironmentID: target.ID, Revision: rev.Revision, Origin: store.OriginBuild, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return advanceID(d.ID)
	}

	first := deploy(env, good)
	wantDeployState(t, first, store.StateSucceeded)
	// The generated value exists only now; open it the way the worker does.
	generated := capturedValues(t, svc, s.team.ID, env, first)
	if len(generated) < 2 {
		t.Fatalf("captured %d secret values, want db-password and session-key", len(generated))
	}
	values := map[string][]byte{}
	for name, v := range generated {
		sc.add(name, v.Value)
		values["production "+name] = v.Value
	}
	if string(generated["db-password"].Value) != stored {
		t.Fatal("the deployment captured a different db-password value")
	}

	// Never healthy, and with no start period to wait out first.
	unhealthy := strings.NewReplacer(`VERSION = "one"`, "VERSION = \"two\"\nHEALTHY = \"false\"", "start_period_seconds = 30", "start_period_seconds = 0")
	second := deploy(env, unhealthy.Replace(good))
	wantDeployState(t, second, store.StateFailed)
	if len(enqueued) != 1 {
		t.Fatalf("want one rollback queued after the failure, got %v", enqueued)
	}
	restore := advanceID(enqueued[0].DeploymentID)
	wantDeployState(t, restore, store.StateSucceeded)
	if restore.RestoredFrom != first.ID {
		t.Fatalf("rollback restored %s, want %s", restore.RestoredFrom, first.ID)
	}

	// Staging gets its own generated session-key, then production
	// receives staging's release.
	staged := deploy(staging, good)
	wantDeployState(t, staged, store.StateSucceeded)
	for name, v := range capturedValues(t, svc, s.team.ID, staging, staged) {
		sc.add("staging "+name, v.Value)
		values["staging "+name] = v.Value
	}
	promoted := promoteSteps(t, sc, s, q, advanceID, application, env, staged)

	// A repository-backed application with a preview of branch feature.
	pvApp, err := st.CreateApplication(ctx, s.team.ID, "secpv-"+id)
	if err != nil {
		t.Fatal(err)
	}
	pvDoc := fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.secrets]]
name = "pv-session"
generate = { type = "random", bytes = 32 }

[[spec.services]]
name = "web"
secrets = [
  { name = "pv-token", target = "/run/secrets/pv-token" },
  { name = "pv-session", target = "/run/secrets/pv-session" },
]
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
CANARY = %q
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
`, pvApp.Name, web, canary)
	saveManifest(t, st, s.team.ID, pvApp.ID, fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[spec.manifest]
path = "slipway.toml"
repository = { url = %q, branch = "main" }
`, pvApp.Name, previewRepository(t, pvDoc)))
	preview, pvDeployments := previewSteps(t, sc, s, q, advanceID, pvApp, pvStored)
	pvValues := capturedValues(t, svc, s.team.ID, preview, pvDeployments[1])
	if string(pvValues["pv-token"].Value) != pvStored || len(pvValues["pv-session"].Value) == 0 {
		t.Fatalf("the preview captured %d values, want pv-token and its own pv-session", len(pvValues))
	}
	for name, v := range pvValues {
		sc.add("preview "+name, v.Value)
		values["preview "+name] = v.Value
	}

	sc.selfCheck(values)

	// Every GET route of the API and the dashboard, aimed at each
	// application, its environments or preview, and each of its
	// deployments.
	// (The first application has no preview: its :slug routes answer 404.)
	for _, target := range []store.Environment{env, staging} {
		fill := func(ref string) map[string]string {
			return map[string]string{"app": ref, "env": target.Name, "environment": target.ID, "environment_name": target.Name,
				"name": "db-password", "service": "web", "slug": preview.Slug, "destination": slack.ID, "host": "registry.scan.example"}
		}
		scanRoutes(t, sc, s, fill(application.Name), fill(application.ID), []string{first.ID, second.ID, restore.ID, staged.ID, promoted.ID})
	}
	pvFill := func(ref string) map[string]string {
		return map[string]string{"app": ref, "env": preview.Slug, "environment": preview.ID, "environment_name": preview.Name,
			"name": "pv-token", "service": "web", "slug": preview.Slug, "destination": slack.ID, "host": "registry.scan.example"}
	}
	scanRoutes(t, sc, s, pvFill(pvApp.Name), pvFill(pvApp.ID), []string{pvDeployments[0].ID, pvDeployments[1].ID})

	// Every row of every table, as text.
	scanTables(t, sc, st)

	sc.scan("captured log", logs.String())
	t.Logf("pipeline, driver, API and dashboard logged %d bytes", logs.Len())

	// docker service inspect, raw, for every service of each environment
	// and the preview.
	for _, e := range []store.Environment{env, staging, preview} {
		list, err := cli.ServiceList(ctx, dockerswarm.ServiceListOptions{Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+e.ID))})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 0 {
			t.Fatalf("no services of %s to inspect", e.Name)
		}
		for _, sv := range list {
			_, raw, err := cli.ServiceInspectWithRaw(ctx, sv.ID, dockerswarm.ServiceInspectOptions{InsertDefaults: true})
			if err != nil {
				t.Fatal(err)
			}
			sc.scan("docker service inspect "+e.Name+" "+sv.Spec.Name, string(raw))
		}
	}

	// The negative control: the outputs scanned do carry the manifest's
	// data and the containers' output, so a secret placed there would have
	// been found. (Preview pages show no rendered manifest; the preview's
	// is in its deployment row and its service spec.)
	for _, where := range []string{
		"docker service inspect production", "docker service inspect staging", "docker service inspect " + preview.Name,
		"table public.deployments", "GET /api/v1/deployments/", "GET /applications/" + application.ID + "/deployments/",
	} {
		sc.wantCarried(canary, where)
	}
	for _, e := range []store.Environment{env, staging, preview} {
		app := application.ID
		if e.ID == preview.ID {
			app = pvApp.ID
		}
		sc.wantCarried(started, "GET /applications/"+app+"/environments/"+e.Name+"/services/web/logs")
	}

	summary.Line(t, "secrets: %d hits in %d scanned outputs", sc.hits, sc.scanned)
}

// unavailableCode finds the code of a feature a server runs without, in a
// page (data-code) or a JSON error (code).
var unavailableCode = regexp.MustCompile(`(data-code="|"code":")(github|nodes)_unavailable"`)

// distinctive is prefix and 32 random hex digits.
func distinctive(prefix string) string {
	var rnd [16]byte
	_, _ = rand.Read(rnd[:])
	return prefix + hex.EncodeToString(rnd[:])
}

func advance(t *testing.T, p *pipeline.Pipeline, st *store.Store, teamID, id string) store.Deployment {
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
	progress, err := pipeline.ParseProgress(d.Steps)
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
// apiFill addresses applications by name, pageFill by id. Dashboard
// routes take :environment as an id (promote) or a name (logs), so those
// are walked with pageFill's "environment_name" too.
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
			if fill["only"] != "" && !strings.Contains(rt.Path, fill["only"]) {
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
				// A 5xx is a fault, except a 503 saying a feature this
				// test's server is built without is unavailable (GitHub
				// and nodes: code *_unavailable).
				if status >= 500 && !(status == http.StatusServiceUnavailable && unavailableCode.MatchString(body)) {
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
	// Every API route takes the application's id or its name: the API is
	// walked by id too.
	walk(s.apiApp, pageFill, apiGet)
	pageGet := func(path string) (int, string) {
		if strings.HasSuffix(path, "/logs/stream") {
			// Server-sent events never end: read the stream from the
			// logs' beginning for a while.
			return s.stream(t, path+"?since=1970-01-01T00:00:00Z", 3*time.Second)
		}
		r := s.get(t, path)
		return r.status, r.body
	}
	walk(s.f, pageFill, pageGet)
	if name := pageFill["environment_name"]; name != "" {
		byName := maps.Clone(pageFill)
		byName["environment"], byName["only"] = name, ":environment"
		walk(s.f, byName, pageGet)
	}
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

func ptr[T any](v T) *T { return &v }
