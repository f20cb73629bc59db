package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store/storetest"
)

// runtimeDouble answers ServiceStatus with fixed services, or err. The
// real Swarm reader is covered by the e2e and browser tests; this checks
// what the Overview makes of its answer.
type runtimeDouble struct {
	services []api.ServiceStatus
	err      error
}

func (r *runtimeDouble) ServiceStatus(context.Context, string) ([]api.ServiceStatus, error) {
	return r.services, r.err
}

func setupRuntime(t *testing.T, rt api.RuntimeReader) *testBundle {
	t.Helper()
	st := storetest.New(t)
	rc, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	a := app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Now: clk.now, Jobs: rc, Runtime: rt, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	return &testBundle{app: a, store: st, clock: clk}
}

// TestOverview_RunningImageAndLastStart: the services table shows the
// running image's short digest, when the newest task started and how many
// tasks exited, from the runtime; a dash for each when Docker cannot be read.
func TestOverview_RunningImageAndLastStart(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 11, 30, 2, 5, 0, 0, time.UTC)
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	rt := &runtimeDouble{services: []api.ServiceStatus{{
		Service: "web", Name: "slw-x-web", Image: "registry.example/shop:1@" + digest, Digest: digest,
		Desired: 2, Running: 2, Health: "healthy", StartedAt: &started, ExitedTasks: 3,
	}}}
	b := setupRuntime(t, rt)
	owner, br, a := b.ownerWithApp(t, shopManifest("2"))
	env, err := b.store.GetEnvironmentByName(context.Background(), owner.team.ID, a.ID, "production")
	if err != nil {
		t.Fatal(err)
	}
	finishBuild(t, b.store, owner.team.ID, env)

	cell := func(r response, id string) string { return strings.TrimSpace(testid(r, id).Text()) }
	r := br.get("/applications/" + a.ID)
	wantStatus(t, r, http.StatusOK)
	if got := cell(r, "service-running-image"); got != "sha256:0123456789ab" {
		t.Errorf("running image %q, want sha256:0123456789ab", got)
	}
	if got := cell(r, "service-started"); !strings.HasPrefix(got, "2026-11-30 02:05 UTC") {
		t.Errorf("last start %q", got)
	}
	if got := cell(r, "service-restarts"); got != "(3 exited)" {
		t.Errorf("restarts %q, want (3 exited)", got)
	}
	if got := cell(r, "service-replicas"); !strings.HasPrefix(got, "2/2") {
		t.Errorf("replicas %q", got)
	}

	// A local image runs by ID; nothing exited, nothing running.
	rt.services = []api.ServiceStatus{{Service: "web", Image: digest, Desired: 2, Health: "starting"}}
	r = br.get("/applications/" + a.ID)
	if got := cell(r, "service-running-image"); got != "sha256:0123456789ab" {
		t.Errorf("running image by ID %q", got)
	}
	if got := cell(r, "service-started"); got != "—" || testid(r, "service-restarts").Length() != 0 {
		t.Errorf("no running task: last start %q, restarts shown %d", got, testid(r, "service-restarts").Length())
	}

	// Docker unavailable: dashes, and the page says why.
	rt.services, rt.err = nil, fmt.Errorf("%w: connection refused", api.ErrRuntimeUnavailable)
	r = br.get("/applications/" + a.ID)
	wantStatus(t, r, http.StatusOK)
	if cell(r, "service-running-image") != "—" || cell(r, "service-started") != "—" || testid(r, "overview-live-error").Length() != 1 {
		t.Errorf("without Docker: image %q, started %q, error shown %d", cell(r, "service-running-image"), cell(r, "service-started"), testid(r, "overview-live-error").Length())
	}
}
