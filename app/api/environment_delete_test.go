package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// teardownJobs returns the environment_teardown jobs River holds.
func teardownJobs(t *testing.T, st *store.Store) []jobs.EnvironmentTeardownArgs {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(),
		`SELECT args FROM river_job WHERE kind = $1 ORDER BY id`, jobs.EnvironmentTeardownArgs{}.Kind())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []jobs.EnvironmentTeardownArgs
	for rows.Next() {
		var raw []byte
		var a jobs.EnvironmentTeardownArgs
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// TestEnvironmentDelete_QueuesTeardownOverHTTP runs the endpoint against a
// real River client: the teardown job is inserted with the deletion.
func TestEnvironmentDelete_QueuesTeardownOverHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	workers := river.NewWorkers()
	if err := jobs.Register(workers, jobs.Deps{Store: st}); err != nil {
		t.Fatal(err)
	}
	rc, err := jobs.NewClient(st.Pool(), workers, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	b := &deployBundle{st: st}
	b.f = fiber.New()
	api.Register(b.f.Group("/api/v1"), api.Config{Store: st, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Jobs: rc})
	u, team, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{Email: "owner@example.com", Password: "correct horse battery", TeamName: "Deleters"})
	if err != nil {
		t.Fatal(err)
	}
	_, b.owner, err = service.CreateToken(ctx, st, service.Actor{TeamID: team.ID, UserID: u.ID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "owner", Scopes: auth.Strings(auth.AllScopes)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, writer, err := service.CreateToken(ctx, st, service.Actor{TeamID: team.ID, UserID: u.ID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "writer", Scopes: []string{string(auth.AppsRead), string(auth.AppsWrite)}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")
	app, err := st.GetApplicationByName(ctx, team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	qa, err := st.CreateEnvironment(ctx, team.ID, store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "qa", Slug: "qa"})
	if err != nil {
		t.Fatal(err)
	}

	want(t, b.do(t, writer, http.MethodDelete, "/api/v1/applications/notes/environments/qa", "", nil), http.StatusForbidden, "")
	r := b.do(t, b.owner, http.MethodDelete, "/api/v1/applications/notes/environments/qa", "", nil)
	want(t, r, http.StatusAccepted, "")
	if r.body["volumes_retained"] != true || !strings.Contains(r.body["message"].(string), "volumes are retained") {
		t.Errorf("response does not say volumes are retained: %s", r.raw)
	}
	got := teardownJobs(t, st)
	if len(got) != 1 || got[0] != (jobs.EnvironmentTeardownArgs{TeamID: team.ID, EnvironmentID: qa.ID, Name: "qa"}) {
		t.Fatalf("teardown jobs = %+v", got)
	}
	want(t, b.do(t, b.owner, http.MethodDelete, "/api/v1/applications/notes/environments/qa", "", nil), http.StatusNotFound, "environment_not_found")

	// Deleting the application queues the teardown of what is left.
	req := httptest.NewRequest(http.MethodDelete, "/api/v1/applications/"+app.ID, nil)
	req.Header.Set("Authorization", "Bearer "+b.owner)
	res, err := b.f.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete application: status %d", res.StatusCode)
	}
	prod, err := st.GetEnvironmentByName(ctx, team.ID, app.ID, "production")
	if err != nil {
		t.Fatal(err)
	}
	if got := teardownJobs(t, st); len(got) != 2 || got[1].EnvironmentID != prod.ID {
		t.Fatalf("teardown jobs after deleting the application = %+v", got)
	}
}
