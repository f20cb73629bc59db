package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// fakeJobs records the jobs handlers insert, and checks that each comes
// with a transaction.
type fakeJobs struct {
	mu   sync.Mutex
	args []jobs.DeployArgs
	// kinds lists the other jobs' kinds.
	kinds []string
}

func (f *fakeJobs) InsertTx(_ context.Context, tx pgx.Tx, args river.JobArgs, _ *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	if tx == nil {
		return nil, errors.New("InsertTx without a transaction")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := args.(jobs.DeployArgs); ok {
		f.args = append(f.args, d)
	} else {
		f.kinds = append(f.kinds, args.Kind())
	}
	return &rivertype.JobInsertResult{Job: &rivertype.JobRow{}}, nil
}

func (f *fakeJobs) queued() []jobs.DeployArgs {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]jobs.DeployArgs(nil), f.args...)
}

// fakeRuntime answers the status endpoint per environment id.
type fakeRuntime struct {
	byEnv map[string][]api.ServiceStatus
	err   error
}

func (f *fakeRuntime) ServiceStatus(_ context.Context, envID string) ([]api.ServiceStatus, error) {
	return f.byEnv[envID], f.err
}

type deployBundle struct {
	f       *fiber.App
	st      *store.Store
	jobs    *fakeJobs
	runtime *fakeRuntime
	team    store.Team
	owner   string // token secret with every scope
	ownerID string // the owner's user id, to mint tokens of other scopes
	viewer  string // token secret of a viewer (apps:read)
}

func setupDeploy(t *testing.T) *deployBundle {
	t.Helper()
	return setupDeployOn(t, storetest.New(t))
}

// setupDeployOn is setupDeploy on st: storetest.NewSchema for tests that
// send requests concurrently.
func setupDeployOn(t *testing.T, st *store.Store) *deployBundle {
	t.Helper()
	ctx := context.Background()
	b := &deployBundle{st: st, jobs: &fakeJobs{}, runtime: &fakeRuntime{byEnv: map[string][]api.ServiceStatus{}}}
	b.f = fiber.New(fiber.Config{BodyLimit: 1 << 20})
	api.Register(b.f.Group("/api/v1"), api.Config{Store: st, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Jobs: b.jobs, Runtime: b.runtime})

	u, team, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{Email: "owner@example.com", Password: "correct horse battery", TeamName: "Deployers"})
	if err != nil {
		t.Fatal(err)
	}
	b.team, b.ownerID = team, u.ID
	_, b.owner, err = service.CreateToken(ctx, st, service.Actor{TeamID: team.ID, UserID: u.ID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "owner", Scopes: auth.Strings(auth.AllScopes)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	v, err := st.CreateUser(ctx, "viewer@example.com", "", "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddMember(ctx, team.ID, v.ID, store.RoleViewer); err != nil {
		t.Fatal(err)
	}
	_, b.viewer, err = service.CreateToken(ctx, st, service.Actor{TeamID: team.ID, UserID: v.ID, Scopes: auth.ScopesOf(auth.RoleViewer)},
		service.TokenRequest{Name: "viewer", Scopes: []string{string(auth.AppsRead)}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type reply struct {
	status int
	raw    string
	body   map[string]any
}

// do sends body with contentType ("" sends none) and headers.
func (b *deployBundle) do(t *testing.T, secret, method, path, contentType string, body []byte, headers ...string) reply {
	t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := b.f.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode, raw: string(raw)}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %s", method, path, raw)
	}
	return r
}

func (b *deployBundle) apply(t *testing.T, doc string, query string, headers ...string) reply {
	t.Helper()
	return b.do(t, b.owner, http.MethodPost, "/api/v1/applications/apply"+query, "application/toml", []byte(doc), headers...)
}

func want(t *testing.T, r reply, status int, code string) {
	t.Helper()
	if r.status != status || (code != "" && r.body["code"] != code) {
		t.Fatalf("status %d body %s, want %d %s", r.status, r.raw, status, code)
	}
}

const notes = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "notes"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "example.com/notes:1"
`

const twoEnvs = notes + `
[spec.environments.staging]
[spec.environments.preview-a]
[spec.environments.production]
promote_from = "staging"
`

func TestApply_SavesRevisionAndEnvironments(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	r := b.apply(t, twoEnvs, "")
	want(t, r, http.StatusCreated, "")
	var res api.ApplyResponse
	mustDecode(t, r, &res)
	if res.Revision != 1 || !res.Created || res.Application.Name != "notes" ||
		strings.Join(res.CreatedEnvironments, ",") != "preview-a,production,staging" || len(res.Deployments) != 0 {
		t.Fatalf("apply = %+v", res)
	}
	if len(b.jobs.queued()) != 0 {
		t.Fatalf("apply without ?deploy queued %v", b.jobs.queued())
	}
	// The same manifest again is unchanged; a different one is revision 2.
	r = b.apply(t, twoEnvs, "")
	want(t, r, http.StatusOK, "")
	if r.body["unchanged"] != true || r.body["revision"] != 1.0 {
		t.Fatalf("re-apply = %s", r.raw)
	}
	r = b.apply(t, strings.Replace(twoEnvs, "notes:1", "notes:2", 1), "")
	want(t, r, http.StatusOK, "")
	if r.body["revision"] != 2.0 {
		t.Fatalf("changed apply = %s", r.raw)
	}

	// The manifest and revisions are readable by name and by id.
	m := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/notes/manifest", "", nil)
	want(t, m, http.StatusOK, "")
	if m.body["revision"] != 2.0 || !strings.Contains(m.body["source"].(string), "notes:2") || m.body["manifest"] == nil {
		t.Fatalf("manifest = %s", m.raw)
	}
	revs := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/"+res.Application.ID+"/revisions", "", nil)
	want(t, revs, http.StatusOK, "")
	if n := len(revs.body["revisions"].([]any)); n != 2 {
		t.Fatalf("revisions = %s", revs.raw)
	}
	envs := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/notes/environments", "", nil)
	want(t, envs, http.StatusOK, "")
	if n := len(envs.body["environments"].([]any)); n != 3 {
		t.Fatalf("environments = %s", envs.raw)
	}
}

func TestApply_JSONBody(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	doc := `{"api_version":"slipway.dev/v1alpha1","kind":"Application","metadata":{"name":"jsonapp"},
		"spec":{"services":[{"name":"web","source":{"type":"image","image":"example.com/j:1"}}]}}`
	r := b.do(t, b.owner, http.MethodPost, "/api/v1/applications/apply", "application/json", []byte(doc))
	want(t, r, http.StatusCreated, "")
	if r.body["revision"] != 1.0 {
		t.Fatalf("json apply = %s", r.raw)
	}
	r = b.do(t, b.owner, http.MethodPost, "/api/v1/applications/apply", "application/json", []byte(`{"api_version": "slipway.dev/v1alpha1",`))
	want(t, r, http.StatusBadRequest, "json_malformed")
	// A decode error of a JSON body (here an unknown field) is
	// json_malformed too; only validation errors are 422.
	r = b.do(t, b.owner, http.MethodPost, "/api/v1/applications/apply", "application/json", []byte(strings.Replace(doc, `"kind"`, `"routez":1,"kind"`, 1)))
	want(t, r, http.StatusBadRequest, "json_malformed")
	if !strings.Contains(r.body["message"].(string), "routez") {
		t.Fatalf("json_malformed does not name the field: %s", r.raw)
	}
	r = b.do(t, b.owner, http.MethodPost, "/api/v1/applications/apply", "application/json", []byte(strings.Replace(doc, `"name":"web"`, `"name":"Web_X"`, 1)))
	want(t, r, http.StatusUnprocessableEntity, "manifest_validation_failed")
}

func TestApply_InvalidManifestListsEveryErrorWithPositions(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	doc := `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "notes"

[[spec.services]]
name = "Web_Service"
replicas = -2
[spec.services.source]
type = "image"
image = "example.com/notes:1"
`
	r := b.apply(t, doc, "")
	want(t, r, http.StatusUnprocessableEntity, "manifest_validation_failed")
	errs := r.body["details"].(map[string]any)["errors"].([]any)
	if len(errs) < 2 {
		t.Fatalf("want an error for the name and one for replicas: %s", r.raw)
	}
	paths := map[string]bool{}
	for _, e := range errs {
		e := e.(map[string]any)
		paths[e["path"].(string)] = true
		if e["code"] == "" || e["message"] == "" || e["line"].(float64) < 7 || e["column"].(float64) < 1 {
			t.Fatalf("error without code, message or position: %v", e)
		}
	}
	if !paths["spec.services[0].name"] || !paths["spec.services[0].replicas"] {
		t.Fatalf("paths %v", paths)
	}
	if _, err := b.st.GetApplicationByName(context.Background(), b.team.ID, "notes"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an invalid manifest created its application: %v", err)
	}
}

func TestApply_Oversize(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	doc := notes + "# " + strings.Repeat("x", api.ManifestBodyLimit) + "\n"
	r := b.apply(t, doc, "")
	want(t, r, http.StatusRequestEntityTooLarge, "manifest_too_large")
}

func TestApply_IfMatchConflict(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")
	want(t, b.apply(t, strings.Replace(notes, ":1", ":2", 1), "", "If-Match", "1"), http.StatusOK, "")
	r := b.apply(t, strings.Replace(notes, ":1", ":3", 1), "", "If-Match", `"1"`)
	want(t, r, http.StatusConflict, "generation_conflict")
	want(t, b.apply(t, strings.Replace(notes, ":1", ":3", 1), "", "If-Match", "2"), http.StatusOK, "")
	want(t, b.apply(t, notes, "", "If-Match", "three"), http.StatusBadRequest, "if_match_invalid")
}

func TestApply_DeployEnqueuesOneJobPerBuildingEnvironment(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	r := b.apply(t, twoEnvs, "?deploy=true")
	want(t, r, http.StatusCreated, "")
	var res api.ApplyResponse
	mustDecode(t, r, &res)
	queued := b.jobs.queued()
	// staging and preview-a build; production is promoted and waits.
	if len(queued) != 2 || len(res.Deployments) != 2 {
		t.Fatalf("queued %v, deployments %+v; want two", queued, res.Deployments)
	}
	got := map[string]string{}
	for _, d := range res.Deployments {
		got[d.ID] = d.Environment
		if d.State != "requested" {
			t.Fatalf("deployment %+v", d)
		}
	}
	for _, q := range queued {
		if q.TeamID != b.team.ID || got[q.DeploymentID] == "" {
			t.Fatalf("job %+v matches no deployment of %v", q, got)
		}
	}
	if got[queued[0].DeploymentID] == got[queued[1].DeploymentID] || got[queued[0].DeploymentID] == "production" || got[queued[1].DeploymentID] == "production" {
		t.Fatalf("jobs for %v", got)
	}
}

func TestDeploy_Environment(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoEnvs, ""), http.StatusCreated, "")

	r := b.do(t, b.owner, http.MethodPost, "/api/v1/applications/notes/environments/staging/deploy", "", nil)
	want(t, r, http.StatusAccepted, "")
	if r.body["state"] != "requested" || r.body["environment"] != "staging" || len(b.jobs.queued()) != 1 ||
		b.jobs.queued()[0].DeploymentID != r.body["id"] {
		t.Fatalf("deploy = %s, queued %v", r.raw, b.jobs.queued())
	}

	r = b.do(t, b.owner, http.MethodPost, "/api/v1/applications/notes/environments/production/deploy", "", nil)
	want(t, r, http.StatusUnprocessableEntity, "environment_promoted")

	r = b.do(t, b.owner, http.MethodPost, "/api/v1/applications/notes/environments/nowhere/deploy", "", nil)
	want(t, r, http.StatusNotFound, "environment_not_found")

	r = b.do(t, b.viewer, http.MethodPost, "/api/v1/applications/notes/environments/staging/deploy", "", nil)
	want(t, r, http.StatusForbidden, "permission_denied")
	if r.body["details"].(map[string]any)["permission"] != "apps:deploy" {
		t.Fatalf("403 details %s", r.raw)
	}
	if len(b.jobs.queued()) != 1 {
		t.Fatalf("refused deploys queued jobs: %v", b.jobs.queued())
	}
}

func TestDeployment_ShowCancelRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDeploy(t)
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")
	first := b.do(t, b.owner, http.MethodPost, "/api/v1/applications/notes/environments/production/deploy", "", nil)
	want(t, first, http.StatusAccepted, "")
	id := first.body["id"].(string)

	// The worker's record: steps and a finished, captured deployment.
	progress := pipeline.Progress{}
	started := time.Now().Add(-3 * time.Second)
	progress.Start("capture", started).State = pipeline.StepSucceeded
	progress.Steps[0].FinishedAt = &started
	if err := b.st.SetDeploymentSteps(ctx, b.team.ID, id, progress.JSON()); err != nil {
		t.Fatal(err)
	}
	advance(t, b.st, b.team.ID, id, store.StateCapturing)
	if _, err := b.st.RecordCapture(ctx, b.team.ID, id, store.Capture{
		Manifest: json.RawMessage(`{}`), Rendered: json.RawMessage(`{"secret_marker":"s3cr3t-value"}`), Variables: json.RawMessage(`{"TOKEN":"s3cr3t-value"}`),
	}); err != nil {
		t.Fatal(err)
	}
	advance(t, b.st, b.team.ID, id, store.StatePreparing, store.StateRollingOut)

	show := b.do(t, b.viewer, http.MethodGet, "/api/v1/deployments/"+id, "", nil)
	want(t, show, http.StatusOK, "")
	if show.body["state"] != "rolling_out" || len(show.body["steps"].([]any)) != 1 || len(show.body["events"].([]any)) == 0 {
		t.Fatalf("show = %s", show.raw)
	}
	if strings.Contains(show.raw, "s3cr3t-value") {
		t.Fatalf("deployment shows captured values: %s", show.raw)
	}

	list := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/notes/deployments?env=production", "", nil)
	want(t, list, http.StatusOK, "")
	if n := len(list.body["deployments"].([]any)); n != 1 {
		t.Fatalf("list = %s", list.raw)
	}
	want(t, b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/notes/deployments?env=nowhere", "", nil), http.StatusNotFound, "not_found")

	want(t, b.do(t, b.viewer, http.MethodPost, "/api/v1/deployments/"+id+"/cancel", "", nil), http.StatusForbidden, "permission_denied")
	cancel := b.do(t, b.owner, http.MethodPost, "/api/v1/deployments/"+id+"/cancel", "", nil)
	want(t, cancel, http.StatusOK, "")
	if cancel.body["state"] != "cancelled" || cancel.body["terminal"] != true {
		t.Fatalf("cancel = %s", cancel.raw)
	}
	want(t, b.do(t, b.owner, http.MethodPost, "/api/v1/deployments/"+id+"/cancel", "", nil), http.StatusConflict, "deployment_finished")

	queuedBefore := len(b.jobs.queued())
	restore := b.do(t, b.owner, http.MethodPost, "/api/v1/deployments/"+id+"/restore", "", nil)
	want(t, restore, http.StatusAccepted, "")
	if restore.body["origin"] != "restore" || restore.body["restored_from"] != id || len(b.jobs.queued()) != queuedBefore+1 {
		t.Fatalf("restore = %s", restore.raw)
	}
	want(t, b.do(t, b.owner, http.MethodGet, "/api/v1/deployments/dep_missing", "", nil), http.StatusNotFound, "not_found")
}

func TestStatus_ReadsRuntime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDeploy(t)
	want(t, b.apply(t, twoEnvs, ""), http.StatusCreated, "")
	a, err := b.st.GetApplicationByName(ctx, b.team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	staging, err := b.st.GetEnvironmentByName(ctx, b.team.ID, a.ID, "staging")
	if err != nil {
		t.Fatal(err)
	}
	b.runtime.byEnv[staging.ID] = []api.ServiceStatus{{
		Service: "web", Name: "slw-x-web", Image: "example.com/notes:1@sha256:abc", Digest: "sha256:abc",
		Desired: 2, Running: 1, Health: "starting", LastError: "task exited with code 1",
	}}
	r := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/notes/status?env=staging", "", nil)
	want(t, r, http.StatusOK, "")
	var st api.ApplicationStatus
	mustDecode(t, r, &st)
	if len(st.Environments) != 1 || len(st.Environments[0].Services) != 1 {
		t.Fatalf("status = %s", r.raw)
	}
	if s := st.Environments[0].Services[0]; s.Desired != 2 || s.Running != 1 || s.Digest != "sha256:abc" || s.LastError == "" {
		t.Fatalf("service = %+v", s)
	}
	want(t, b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/notes/status?env=nowhere", "", nil), http.StatusNotFound, "environment_not_found")

	// Docker unreachable: still 200, the reason in the body.
	b.runtime.err = fmt.Errorf("%w: dial unix /var/run/docker.sock: connection refused", api.ErrRuntimeUnavailable)
	r = b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/notes/status", "", nil)
	want(t, r, http.StatusOK, "")
	mustDecode(t, r, &st)
	if len(st.Environments) != 3 {
		t.Fatalf("status = %s", r.raw)
	}
	for _, e := range st.Environments {
		if e.Error != "docker_unavailable" {
			t.Fatalf("environment %s: %+v", e.Name, e)
		}
	}
}

func mustDecode(t *testing.T, r reply, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.raw), v); err != nil {
		t.Fatalf("decode %s: %v", r.raw, err)
	}
}

// advance walks a deployment through states as the worker would.
func advance(t *testing.T, st *store.Store, teamID, id string, states ...store.DeploymentState) {
	t.Helper()
	ctx := context.Background()
	for _, to := range states {
		d, err := st.GetDeployment(ctx, teamID, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.TransitionDeployment(ctx, teamID, id, []store.DeploymentState{d.State}, to); err != nil {
			t.Fatal(err)
		}
	}
}
