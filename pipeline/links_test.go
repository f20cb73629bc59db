package pipeline_test

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/pipeline"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// linkBundle is three applications of one team (auth, notes, billing),
// each with a production environment, deployed through a pipeline that
// manages links.
type linkBundle struct {
	*pipelinetest.Bundle
	linked *pipeline.Pipeline
	envs   map[string]store.Environment // by application name
	queue  *linksQueue
}

// linksQueue records the teams whose links_reconcile deployments queue.
type linksQueue struct {
	*pipelinetest.Queue
	teams chan string
}

func (q *linksQueue) LinksChanged(_ context.Context, _ *store.Store, teamID string) error {
	q.teams <- teamID
	return nil
}

func setupLinks(t *testing.T) *linkBundle {
	t.Helper()
	ctx := context.Background()
	b := pipelinetest.Setup(t, "production")
	lb := &linkBundle{Bundle: b, envs: map[string]store.Environment{}, queue: &linksQueue{Queue: b.Queue, teams: make(chan string, 64)}}
	p := *b.Pipeline
	p.Links = true
	p.Queue = lb.queue
	lb.linked = &p
	for _, name := range []string{"auth", "notes", "billing"} {
		app, err := b.Store.CreateApplication(ctx, b.Team.ID, name)
		must(t, err)
		env, err := b.Store.CreateEnvironment(ctx, b.Team.ID, store.EnvironmentParams{
			ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production",
		})
		must(t, err)
		lb.envs[name] = env
	}
	// The environments and link networks go with the team's objects
	// (pipelinetest.Setup).
	return lb
}

// deployApp saves toml as the application's manifest, deploys its production
// environment and, as the worker would, runs the links_reconcile job the
// deployment enqueued.
func (lb *linkBundle) deployApp(t *testing.T, app, toml string) (store.Deployment, pipeline.LinksResult) {
	t.Helper()
	env := lb.envs[app]
	d := lb.DeployTo(t, lb.linked, env.ApplicationID, env.ID, toml)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	lb.expectLinksEnqueued(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	res, err := lb.linked.ReconcileLinks(ctx, lb.Team.ID)
	must(t, err)
	t.Logf("links_reconcile after %s: %s (connected %d, removed %d, services updated %d)", app, time.Since(began).Round(time.Millisecond), len(res.Connected), len(res.Removed), len(res.Updated))
	return d, res
}

// expectLinksEnqueued takes the links_reconcile of the team a successful
// deployment enqueued.
func (lb *linkBundle) expectLinksEnqueued(t *testing.T) {
	t.Helper()
	select {
	case team := <-lb.queue.teams:
		if team != lb.Team.ID {
			t.Fatalf("queued links_reconcile of team %s, want %s", team, lb.Team.ID)
		}
	default:
		t.Fatal("a successful deployment enqueued no links_reconcile")
	}
}

func serviceManifest(app, image, extra string, services ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = %q\n", app)
	for _, s := range services {
		fmt.Fprintf(&b, "\n[[spec.services]]\nname = %q\n[spec.services.source]\ntype = \"image\"\nimage = %q\n", s, image)
	}
	return b.String() + extra
}

// taskAddresses returns the addresses of the running tasks of an
// environment's service, on every network they joined.
func (lb *linkBundle) taskAddresses(t *testing.T, app, service string) []string {
	t.Helper()
	env := lb.envs[app]
	cli := swarmtest.Client(t)
	tasks, err := cli.TaskList(context.Background(), dockerswarm.TaskListOptions{Filters: filters.NewArgs(
		filters.Arg("service", swarm.ServiceName(store.ShortID(env.ID), service)), filters.Arg("desired-state", "running"))})
	must(t, err)
	var out []string
	for _, task := range tasks {
		for _, na := range task.NetworksAttachments {
			for _, a := range na.Addresses {
				ip, _, err := net.ParseCIDR(a)
				must(t, err)
				out = append(out, ip.String())
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s/%s has no task address", app, service)
	}
	return out
}

// reachLog is what the reach client logged about each URL.
type reachLog struct {
	ok, failed map[string]int
	// failedSinceOK counts a URL's failures after its last success (all of
	// them when it never succeeded).
	failedSinceOK map[string]int
}

// reached reads the reach client's log lines written after since.
func (lb *linkBundle) reached(t *testing.T, since time.Time) reachLog {
	t.Helper()
	env := lb.envs["notes"]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type line struct {
		at  time.Time
		url string
		ok  bool
	}
	var lines []line
	must(t, lb.Driver.ServiceLogs(ctx, swarm.EnvRef{ID: env.ID, ShortID: store.ShortID(env.ID)}, "client", swarm.LogOptions{Since: since}, func(batch []swarm.LogLine) error {
		for _, l := range batch {
			fields := strings.Fields(l.Text)
			if len(fields) < 2 || (fields[0] != "ok" && fields[0] != "fail") || !l.Time.After(since) {
				continue
			}
			lines = append(lines, line{at: l.Time, url: strings.TrimSuffix(fields[1], ":"), ok: fields[0] == "ok"})
		}
		return nil
	}))
	// The lines of a replaced task and of its replacement interleave.
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].at.Before(lines[j].at) })
	r := reachLog{ok: map[string]int{}, failed: map[string]int{}, failedSinceOK: map[string]int{}}
	for _, l := range lines {
		if l.ok {
			r.ok[l.url]++
			r.failedSinceOK[l.url] = 0
		} else {
			r.failed[l.url]++
			r.failedSinceOK[l.url]++
		}
	}
	return r
}

// reachWithin bounds every wait on the reach client's logs. The client
// tries each URL every few seconds; the bound is only there for a broken
// run, generous for a busy machine.
const reachWithin = 5 * time.Minute

// waitReached polls the client's logs until cond holds for what it
// reached since since.
func (lb *linkBundle) waitReached(t *testing.T, since time.Time, what string, cond func(r reachLog) bool) reachLog {
	t.Helper()
	deadline := time.Now().Add(reachWithin)
	for {
		r := lb.reached(t, since)
		if cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; ok=%v failed=%v", what, reachWithin, r.ok, r.failed)
		}
		time.Sleep(time.Second)
	}
}

func TestLinks_ImportedServiceReachableOthersNot(t *testing.T) {
	t.Parallel()
	lb := setupLinks(t)
	web := swarmtest.Image(t, "web")
	reach := swarmtest.Image(t, "reach")

	exports := "\n[[spec.exports]]\nservice = \"api\"\napplications = [\"notes\", \"billing\"]\n"
	authDep, _ := lb.deployApp(t, "auth", serviceManifest("auth", web, exports, "api", "admin"))
	importAuth := "\n[[spec.imports]]\napplication = \"auth\"\nservice = \"api\"\n"
	// billing imports api too: two importers of auth must not reach each
	// other.
	if _, res := lb.deployApp(t, "billing", serviceManifest("billing", web, importAuth, "web")); len(res.Connected) != 1 {
		t.Fatalf("billing's import connected %v, want one link", res.Connected)
	}

	const linked = "http://api.auth:8080/whoami"
	others := []string{"http://admin.auth:8080/", "http://web.billing:8080/", "http://web:8080/"}
	for _, addr := range append(lb.taskAddresses(t, "auth", "admin"), lb.taskAddresses(t, "billing", "web")...) {
		others = append(others, "http://"+addr+":8080/")
	}
	client := fmt.Sprintf("[spec.services.environment]\nREACH_URLS = %q\n", strings.Join(append([]string{linked}, others...), ","))
	notes := serviceManifest("notes", reach, client, "client")

	// Deployed without the import first: nothing of auth is reachable.
	_, res := lb.deployApp(t, "notes", notes)
	if len(res.Connected) != 0 || len(res.Unconnected) != 0 {
		t.Fatalf("notes without imports: connected %v, unconnected %v", res.Connected, res.Unconnected)
	}
	start := time.Now()
	lb.waitReached(t, start, "notes tries api.auth", func(r reachLog) bool { return r.failed[linked] >= 2 })

	start = time.Now()
	// admin is not exported: that import connects nothing and the
	// deployment warns about it.
	importAdmin := "\n[[spec.imports]]\napplication = \"auth\"\nservice = \"admin\"\n"
	notesDep, res := lb.deployApp(t, "notes", notes+importAuth+importAdmin)
	if len(res.Connected) != 1 {
		t.Fatalf("notes' import connected %v (unconnected %v), want one link", res.Connected, res.Unconnected)
	}
	if w := pipeline.DeploymentWarnings(notesDep); len(w) != 1 || !strings.HasPrefix(w[0], "spec.imports[1]: import_unconnected: ") {
		t.Fatalf("deployment warnings %q, want import_unconnected for spec.imports[1]", w)
	}
	t.Logf("link connected %s after notes' deployment started", time.Since(start).Round(time.Millisecond))
	r := lb.waitReached(t, start, "notes reaches api.auth", func(r reachLog) bool { return r.ok[linked] >= 3 })
	t.Logf("api.auth reachable from notes: %d fetches ok", r.ok[linked])
	// Drift repair (and so every later deployment) keeps the link
	// networks the services joined: it finds nothing to change.
	for _, d := range []store.Deployment{authDep, notesDep} {
		repaired, err := lb.linked.Reconcile(context.Background(), lb.Team.ID, d.ID)
		must(t, err)
		if len(repaired) > 0 {
			t.Fatalf("drift repair of %s changed %+v; the link networks should be part of what it runs", d.ID, repaired)
		}
	}
	// Once the link works, watch a few more rounds: everything else stays
	// unreachable, by name and by address.
	after := time.Now()
	r = lb.waitReached(t, after, "a few more rounds", func(r reachLog) bool { return r.ok[linked] >= 6 })
	for _, u := range others {
		if r.ok[u] > 0 || r.failed[u] == 0 {
			t.Errorf("%s: %d fetches ok, %d failed; want only failures", u, r.ok[u], r.failed[u])
		}
	}

	// Removing the import in a new deployment of notes detaches the link
	// without deploying auth.
	start = time.Now()
	_, res = lb.deployApp(t, "notes", notes)
	if len(res.Removed) != 1 {
		t.Fatalf("removing notes' import removed %v, want its link", res.Removed)
	}
	detached := time.Now()
	t.Logf("link removed %s after notes' deployment started", detached.Sub(start).Round(time.Millisecond))
	// Tasks from before the detachment may still answer while Swarm rolls
	// them out: wait for failures only since the last success, then watch
	// a few more rounds without one.
	lb.waitReached(t, detached, "api.auth unreachable from notes after the link was removed", func(r reachLog) bool { return r.failedSinceOK[linked] >= 3 })
	gone := time.Now()
	t.Logf("api.auth unreachable from notes %s after the link was removed", gone.Sub(detached).Round(time.Millisecond))
	if r := lb.waitReached(t, gone, "a few more rounds without the link", func(r reachLog) bool { return r.failed[linked] >= 3 }); r.ok[linked] > 0 {
		t.Fatalf("api.auth reachable again after the link was removed: %d fetches ok, %d failed", r.ok[linked], r.failed[linked])
	}
	ctx := context.Background()
	deps, err := lb.Store.ListDeployments(ctx, lb.Team.ID, store.DeploymentFilter{EnvironmentID: lb.envs["auth"].ID})
	must(t, err)
	if len(deps) != 1 || deps[0].ID != authDep.ID {
		t.Fatalf("auth has %d deployments, want only its first", len(deps))
	}
	// Swarm lists a removed network for a moment after removing it.
	pipelinetest.Eventually(t, "only billing's link network left", 2*time.Minute, func() (bool, string) {
		nets, err := lb.Driver.ListLinkNetworks(ctx, lb.Team.ID)
		must(t, err)
		return len(nets) == 1 && nets[0].ImporterEnvID == lb.envs["billing"].ID, fmt.Sprintf("%+v", nets)
	})
	rows, err := lb.Store.ListEnvironmentLinks(ctx, lb.Team.ID)
	must(t, err)
	if len(rows) != 1 || rows[0].ImporterEnvironmentID != lb.envs["billing"].ID || rows[0].Alias != "api.auth" {
		t.Fatalf("environment_links rows: %+v, want billing's link only", rows)
	}
}
