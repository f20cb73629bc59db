package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	rswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// swarmLogs reads logs from the real Swarm, as serve's adapter does.
type swarmLogs struct{ driver *rswarm.Driver }

func (s swarmLogs) ServiceLogs(ctx context.Context, envID, service string, o app.LogOptions, emit func([]app.LogLine) error) error {
	err := s.driver.ServiceLogs(ctx, rswarm.EnvRef{ID: envID, ShortID: store.ShortID(envID)}, service,
		rswarm.LogOptions{Follow: o.Follow, Tail: o.Tail, Since: o.Since}, func(lines []rswarm.LogLine) error {
			out := make([]app.LogLine, len(lines))
			for i, l := range lines {
				out[i] = app.LogLine{Time: l.Time, Task: l.Task, Node: l.Node, Stderr: l.Stderr, Text: l.Text}
			}
			return emit(out)
		})
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

	t.Run("the stream sends new lines after the page's", func(t *testing.T) {
		lines := testid(page, "log-line")
		since, _ := lines.Last().Attr("data-ts")
		if task, _ := lines.Last().Attr("data-task"); task != "talker.1" || since == "" {
			t.Fatalf("last line task %q, time %q: want talker.1 and its time", task, since)
		}
		if box, _ := testid(page, "service-logs-box").Attr("sse-connect"); box != link+"/stream?since="+since {
			t.Fatalf("the page streams from %q, want after its last line", box)
		}
		base := b.listen(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+link+"/stream?since="+url.QueryEscape(since), nil)
		for k, v := range br.cookies {
			req.AddCookie(&http.Cookie{Name: k, Value: v})
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || ct != "text/event-stream" {
			t.Fatalf("stream: status %d, Content-Type %q", res.StatusCode, ct)
		}
		// A restart starts a new task, which writes its line again: the
		// stream must bring that one, not the line the page showed.
		env := rswarm.EnvRef{ID: ds[0].EnvironmentID, ShortID: store.ShortID(ds[0].EnvironmentID)}
		if err := driver.RestartService(ctx, env, "talker"); err != nil {
			t.Fatal(err)
		}
		ev := readEvent(t, bufio.NewReader(res.Body), "lines")
		if ev.id <= since {
			t.Fatalf("event id %q is not after the page's last line %q", ev.id, since)
		}
		if !strings.Contains(ev.data, "hello from talker") || !strings.Contains(ev.data, `data-task="talker.1"`) || !strings.HasPrefix(ev.data, "<li") {
			t.Fatalf("event data %q is not the new line as an <li>", ev.data)
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
		if !strings.HasSuffix(line, " hello from talker") || !strings.HasPrefix(line, time.Now().UTC().Format("2006")) || !strings.Contains(line, " talker.1@") {
			t.Fatalf("first line %q is not a timestamped, labelled line of output", line)
		}
	})
	t.Run("the API reads the same logs, a line per task with its time", func(t *testing.T) {
		ctx := context.Background()
		d := ds[0]
		for _, to := range []store.DeploymentState{store.StatePreparing, store.StateRollingOut, store.StateSucceeded} {
			if d, err = b.store.TransitionDeployment(ctx, owner.team.ID, d.ID, []store.DeploymentState{d.State}, to); err != nil {
				t.Fatal(err)
			}
		}
		base := b.listen(t)
		path := "/api/v1/applications/" + appID + "/environments/production/services/talker/logs"
		// A viewer's token has logs:read.
		viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
		token := apiToken(t, b, owner.team.ID, viewer, auth.LogsRead)
		status, body := apiGet(t, base+path+"?tail=50", token)
		var list api.ServiceLogList
		if err := json.Unmarshal([]byte(body), &list); status != http.StatusOK || err != nil || len(list.Lines) == 0 {
			t.Fatalf("GET %s: %d %v\n%s", path, status, err, body)
		}
		l := list.Lines[len(list.Lines)-1]
		if l.Text != "hello from talker" || l.Task != "talker.1" || l.Stream != "stdout" || time.Since(l.Time) > 10*time.Minute || l.Node == "" {
			t.Fatalf("last line %+v: want talker.1's output with its time and node", l)
		}
		// follow=true streams NDJSON: the tail first, then new lines.
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, base+path+"?follow=true&tail=1", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || ct != "application/x-ndjson" {
			t.Fatalf("follow: status %d, Content-Type %q", res.StatusCode, ct)
		}
		sc := bufio.NewScanner(res.Body)
		var first api.ServiceLogLine
		if !sc.Scan() || json.Unmarshal(sc.Bytes(), &first) != nil || first.Text != "hello from talker" {
			t.Fatalf("first streamed line %q (%v)", sc.Text(), sc.Err())
		}
		// A restart starts a new task, which writes its line again.
		if err := driver.RestartService(rctx, rswarm.EnvRef{ID: d.EnvironmentID, ShortID: store.ShortID(d.EnvironmentID)}, "talker"); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			var next api.ServiceLogLine
			if len(strings.TrimSpace(sc.Text())) == 0 {
				continue
			}
			if err := json.Unmarshal(sc.Bytes(), &next); err != nil {
				t.Fatalf("streamed line %q: %v", sc.Text(), err)
			}
			if next.Time.After(first.Time) && next.Text == "hello from talker" {
				break
			}
		}
		if sc.Err() != nil {
			t.Fatalf("the stream brought no new line after the restart: %v", sc.Err())
		}
		for _, tc := range []struct {
			path, query string
			status      int
			code        string
		}{
			{"/api/v1/applications/" + appID + "/environments/production/services/missing/logs", "", http.StatusNotFound, "service_not_found"},
			{"/api/v1/applications/" + appID + "/environments/staging/services/talker/logs", "", http.StatusNotFound, "environment_not_found"},
			{path, "?since=yesterday", http.StatusUnprocessableEntity, "since_invalid"},
		} {
			status, body := apiGet(t, base+tc.path+tc.query, token)
			if status != tc.status || !strings.Contains(body, `"code":"`+tc.code+`"`) {
				t.Errorf("GET %s%s: %d %s, want %d %s", tc.path, tc.query, status, body, tc.status, tc.code)
			}
		}
		// Another team's token reads nothing, by id or by name.
		other := b.signup(t, "rival-api@example.com", "Rival API")
		rival := apiToken(t, b, other.team.ID, other.user, auth.LogsRead)
		for _, p := range []string{path, strings.Replace(path, appID, "talk", 1)} {
			if status, body := apiGet(t, base+p, rival); status != http.StatusNotFound || strings.Contains(body, "hello") {
				t.Errorf("another team's GET %s: %d %s", p, status, body)
			}
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

// sseEvent is one server-sent event.
type sseEvent struct{ name, id, data string }

// readEvent reads events until one named name arrives.
func readEvent(t *testing.T, r *bufio.Reader, name string) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before a %q event: %v", name, err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if ev.name == name {
				return ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			ev.data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// apiToken is an API token of user in team with scopes.
func apiToken(t *testing.T, b *testBundle, teamID string, user store.User, scopes ...auth.Scope) string {
	t.Helper()
	_, secret, err := service.CreateToken(context.Background(), b.store, service.Actor{TeamID: teamID, UserID: user.ID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "logs", Scopes: auth.Strings(scopes)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// apiGet GETs url with token, returning the status and body.
func apiGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}
