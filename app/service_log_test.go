package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/manifest"
	rswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// swarmLogs reads logs from the real Swarm, as serve's adapter does.
type swarmLogs struct{ driver *rswarm.Driver }

func (s swarmLogs) ServiceLogs(ctx context.Context, envID, service string, o app.LogOptions, w io.Writer) error {
	err := s.driver.ServiceLogs(ctx, rswarm.EnvRef{ID: envID, ShortID: store.ShortID(envID)}, service,
		rswarm.LogOptions{Follow: o.Follow, Tail: o.Tail, Timestamps: o.Timestamps}, w)
	if rswarm.Code(err) == rswarm.CodeServiceNotRunning {
		return fmt.Errorf("%w: %v", app.ErrServiceNotRunning, err)
	}
	return err
}

const talkerManifest = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "talk"

[[spec.services]]
name = "talker"
command = ["/app", "--print", "hello from talker", "--sleep", "600"]

[spec.services.source]
type = "image"
image = "registry.example/talk:1"
`

// runTalker saves the talk application through the dashboard, records
// its deployment's capture as the worker would, and runs its service on
// the real Swarm under the environment's names and labels.
func runTalker(t *testing.T, b *testBundle, br *browser, teamID string, driver *rswarm.Driver, image string) (appID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wantStatus(t, br.post("/manifest", url.Values{"manifest": {talkerManifest}, "intent": {"deploy"}}), http.StatusSeeOther)
	ds, err := b.store.ListDeployments(ctx, teamID, store.DeploymentFilter{})
	if err != nil || len(ds) != 1 {
		t.Fatalf("deployments %v %v", ds, err)
	}
	d := ds[0]
	m, err := manifest.Decode([]byte(talkerManifest), "toml")
	if err != nil {
		t.Fatal(err)
	}
	rendered, _ := json.Marshal(m)
	if _, err := b.store.TransitionDeployment(ctx, teamID, d.ID, []store.DeploymentState{store.StateRequested}, store.StateCapturing); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.RecordCapture(ctx, teamID, d.ID, store.Capture{Manifest: rendered, Rendered: rendered, Variables: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	env := rswarm.EnvRef{ID: d.EnvironmentID, ShortID: store.ShortID(d.EnvironmentID)}
	swarmtest.RemoveOnCleanup(t, rswarm.LabelEnv+"="+env.ID)
	st, err := rswarm.Desired(rswarm.DesiredInput{Manifest: m, TeamID: teamID, AppID: d.ApplicationID, EnvID: env.ID, EnvShortID: env.ShortID,
		DeploymentID: d.ID, Images: map[string]string{"talker": image}})
	if err != nil {
		t.Fatal(err)
	}
	if err := driver.EnsureNetworks(ctx, st); err != nil {
		t.Fatal(err)
	}
	svc, _ := st.Service("talker")
	if _, err := driver.UpdateService(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if err := driver.WaitConverged(ctx, svc, time.Minute); err != nil {
		t.Fatal(err)
	}
	return d.ApplicationID
}

// TestServiceLogs_RealSwarm: the Overview links each service to its logs,
// which come from Docker, follow by polling and download as a file; names
// are resolved within the team, so another team gets nothing.
func TestServiceLogs_RealSwarm(t *testing.T) {
	t.Parallel()
	driver := rswarm.NewDriver(swarmtest.Client(t), nil)
	image := swarmtest.Image(t, "job")
	st := storetest.New(t)
	jobs, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{store: st, clock: &clock{t: time.Now()}}
	b.app = app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Now: b.clock.now, Jobs: jobs, Logs: swarmLogs{driver},
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	appID := runTalker(t, b, br, owner.team.ID, driver, image)

	overview := br.get("/applications/" + appID)
	link, _ := testid(overview, "service-logs-link").Attr("href")
	want := "/applications/" + appID + "/environments/production/services/talker/logs"
	if link != want {
		t.Fatalf("overview logs link %q, want %q", link, want)
	}
	ds, err := b.store.ListDeployments(context.Background(), owner.team.ID, store.DeploymentFilter{ApplicationID: appID})
	if err != nil || len(ds) != 1 {
		t.Fatalf("deployments %v %v", ds, err)
	}
	detail := br.get("/applications/" + appID + "/deployments/" + ds[0].ID)
	if href, _ := testid(detail, "deployment-logs-link").Attr("href"); href != want {
		t.Errorf("deployment page logs link %q, want %q", href, want)
	}
	var page response
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		page = br.get(link)
		wantStatus(t, page, http.StatusOK)
		if strings.Contains(testid(page, "service-logs-text").Text(), "hello from talker") {
			break
		}
	}
	if !strings.Contains(testid(page, "service-logs-text").Text(), "hello from talker") {
		t.Fatalf("logs page lacks the service's output:\n%s", truncate(page.body))
	}
	if testid(page, "service-logs-form").Find(`label[for="logs-tail"]`).Length() != 1 {
		t.Error("the line count select has no label")
	}

	t.Run("follow polls a fragment", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, link+"?follow=1&tail=100", nil)
		req.Header.Set("HX-Request", "true")
		r := br.do(req)
		wantStatus(t, r, http.StatusOK)
		if testid(r, "topbar").Length() != 0 {
			t.Fatal("the poll got the whole page")
		}
		sec := testid(r, "service-logs")
		if trig, _ := sec.Attr("hx-trigger"); trig != "every 2s" {
			t.Fatalf("following fragment trigger %q", trig)
		}
		if get, _ := sec.Attr("hx-get"); get != link+"?follow=1&tail=100" {
			t.Fatalf("following fragment polls %q", get)
		}
		if !strings.Contains(sec.Text(), "hello from talker") {
			t.Fatal("the poll lacks the output")
		}
		still := br.get(link)
		if _, polls := testid(still, "service-logs").Attr("hx-trigger"); polls {
			t.Fatal("the logs poll without follow")
		}
	})
	t.Run("download is a timestamped text file", func(t *testing.T) {
		r := br.get(link + "/download")
		wantStatus(t, r, http.StatusOK)
		if cd := r.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, "talk-production-talker.log") {
			t.Fatalf("Content-Disposition %q", cd)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("Content-Type %q", ct)
		}
		line := strings.SplitN(strings.TrimSpace(r.body), "\n", 2)[0]
		if !strings.Contains(line, "hello from talker") || !strings.HasPrefix(line, time.Now().UTC().Format("2006")) {
			t.Fatalf("first line %q is not a timestamped line of output", line)
		}
	})
	t.Run("names are checked against the team's store", func(t *testing.T) {
		base := "/applications/" + appID + "/environments/"
		for _, path := range []string{
			base + "production/services/missing/logs",
			base + "production/services/net/logs", // a Docker object of the environment, not a service
			base + "staging/services/talker/logs",
			base + "production/services/talker/../talker/logs",
		} {
			if r := br.get(path); r.status != http.StatusNotFound {
				t.Errorf("%s: status %d, want 404", path, r.status)
			}
		}
		other := b.signup(t, "other@example.com", "Rival")
		rival := b.sessionBrowser(t, other.user)
		for _, path := range []string{link, link + "/download"} {
			if r := rival.get(path); r.status != http.StatusNotFound || strings.Contains(r.body, "hello from talker") {
				t.Errorf("another team's %s: status %d", path, r.status)
			}
		}
	})
}
