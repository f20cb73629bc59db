package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/app/auth"
	appservice "github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/outbound"
	slwswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
	"github.com/slipwayhq/slipway/test/summary"
)

// confinePidsLimit is [containers] pids_limit for the test's dev.
const confinePidsLimit = 64

// TestConfinement_TenantReachesNothingItShouldNot runs `slipway dev` with
// every listener the control plane can open (dashboard and API, the
// gateway's TCP feed, the gateway's published private and metrics ports)
// and two teams. Team A deploys a routed probe (testdata/images/confine)
// on the real Swarm, which reports what it sees and reaches from inside:
// no Docker socket, the Docker API's TCP ports, the control plane's
// listeners, Postgres, the feed and the published gateway ports closed on
// every address of the host, the gateway's private and metrics ports
// closed on the ingress overlay they share, and team B's service closed;
// while its own service and the gateway's public port on that overlay are
// open (controls: the probe does reach what it may). Its processes stop at
// pids_limit, and no-new-privileges is set where this engine applies it.
func TestConfinement_TenantReachesNothingItShouldNot(t *testing.T) {
	t.Parallel()
	bin := slipwayBinary(t)
	cli := swarmtest.Client(t)
	webImage := swarmtest.Image(t, "web")
	probeImage := swarmtest.Image(t, "confine")
	id := swarmtest.ID()
	gatewayName := "slipway-gw-confine-" + id
	envs := devCleanup(t, cli, gatewayName)
	dbURL := storetest.NewDatabaseURL(t)

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	metricsToken := filepath.Join(dir, "metrics-token")
	if err := os.WriteFile(metricsToken, []byte(auth.NewSecret("")), 0o644); err != nil {
		t.Fatal(err)
	}
	// The listeners a tenant must not reach on any address of the host;
	// the gateway's public port (published on every address) it may.
	gatewayHTTP := freePort(t)
	ports := map[string]int{"private": freePort(t), "metrics": freePort(t), "feed": freePort(t)}
	// How the probe speaks to each (see testdata/images/confine).
	kinds := map[string]string{"private": "http", "metrics": "http:/metrics", "feed": "http", "control-plane": "http:/healthz",
		"postgres": "pg", "postgres-default": "pg", "docker-tcp": "http:/_ping", "docker-tls": "http:/_ping"}
	cmd := exec.Command(bin, "dev", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--bootstrap-token-file", tokenFile)
	cmd.Env = append(withoutEnv(os.Environ(), "DATABASE_URL"),
		"DATABASE_URL="+dbURL,
		"SLIPWAY_IMAGES_PULL=false",
		"SLIPWAY_GATEWAY_NAME="+gatewayName,
		"SLIPWAY_GATEWAY_HTTP_PORT="+strconv.Itoa(gatewayHTTP),
		"SLIPWAY_GATEWAY_HTTPS_PORT=0",
		"SLIPWAY_INGRESS_PRIVATE_ADDR=127.0.0.1:"+strconv.Itoa(ports["private"]),
		"SLIPWAY_INGRESS_METRICS_ADDR=127.0.0.1:"+strconv.Itoa(ports["metrics"]),
		"SLIPWAY_INGRESS_METRICS_TOKEN_FILE="+metricsToken,
		"SLIPWAY_INGRESS_FEED_ADDR=127.0.0.1:"+strconv.Itoa(ports["feed"]),
		"SLIPWAY_INGRESS_GATEWAY_TOKEN="+auth.NewSecret(""),
		"SLIPWAY_CONTAINERS_PIDS_LIMIT="+strconv.Itoa(confinePidsLimit),
	)
	base := startDev(t, cmd, tokenFile)
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	tokenA := strings.TrimSpace(string(raw))
	tokenB := secondTeamToken(t, dbURL)
	_, controlPort, _ := strings.Cut(strings.TrimPrefix(base, "http://"), ":")
	ports["control-plane"], _ = strconv.Atoi(controlPort)
	_, pgPort, _ := strings.Cut(regexp.MustCompile(`@[^/]+`).FindString(dbURL), ":")
	ports["postgres"], _ = strconv.Atoi(pgPort)
	ports["postgres-default"] = 5432
	ports["docker-tcp"], ports["docker-tls"] = 2375, 2376

	// Team B runs a web service on its own network.
	depB := applyAndWait(t, base, tokenB, fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "confine-b-%s"
[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
VERSION = "team-b-%s"
`, id, webImage, id))
	envs.Add(depB)
	bAddrs := taskAddresses(t, cli, depB)

	// Team A: a web service and the routed probe. The first deployment
	// creates the ingress overlay and joins the gateway to it; the second
	// tells the probe where everything is.
	probeManifest := func(nonce, targets string) string {
		return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "confine-a-%s"
[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
VERSION = "team-a-%s"
[[spec.services]]
name = "probe"
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
CONFINE_NONCE = %q
CONFINE_FORKS = "%d"
CONFINE_TCP = %q
[[spec.routes]]
hostname = "confine-%s.test"
service = "probe"
port = 8080
visibility = "private"
`, id, webImage, id, probeImage, nonce, 4*confinePidsLimit, targets, id)
	}
	envA := applyAndWait(t, base, tokenA, probeManifest("first", ""))
	envs.Add(envA)
	gw, err := cli.ContainerInspect(context.Background(), gatewayName)
	if err != nil {
		t.Fatal(err)
	}
	overlay := gw.NetworkSettings.Networks[slwswarm.IngressNetworkName(store.ShortID(envA))]
	if overlay == nil || overlay.IPAddress == "" {
		t.Fatalf("the gateway is not on team A's ingress overlay: %v", gw.NetworkSettings.Networks)
	}

	var targets []string
	add := func(name, kind, addr string) {
		k, path, _ := strings.Cut(kind, ":")
		targets = append(targets, name+"="+k+":"+addr+path)
	}
	hosts, err := outbound.HostAddresses()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if !h.Addr().Is4() || h.Addr().IsLoopback() {
			continue
		}
		for name, port := range ports {
			add(name+"@"+h.Addr().String(), kinds[name], fmt.Sprintf("%s:%d", h.Addr(), port))
		}
	}
	add("gateway-overlay-private", "http:/", overlay.IPAddress+":8000")
	add("gateway-overlay-metrics", "http:/metrics", overlay.IPAddress+":9100")
	for _, a := range bAddrs {
		add("team-b-web", "http:/version", a+":8080")
	}
	// Controls: what the probe may reach, answering as it should.
	add("own-web", "http:/version", "web:8080")
	add("gateway-overlay-http", "http:/", overlay.IPAddress+":80")
	controls := map[string]string{"own-web": "team-a-" + id, "gateway-overlay-http": "HTTP/1."}
	applyAndWait(t, base, tokenA, probeManifest("second", strings.Join(targets, ",")))
	report := probeReport(t, cli, envA, "second")

	// A target is reached when it answered; team B's service only when
	// the answer is its own (a network on the way may accept any
	// connection and answer for nobody).
	answers := map[string]string{}
	tried := 0
	line := regexp.MustCompile(`^reach (\S+) \S+ (reached|closed) ?(.*)$`)
	for _, l := range strings.Split(report, "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			tried++
			if m[2] == "reached" {
				answers[m[1]] += m[3]
			}
		}
	}
	if tried != len(targets) {
		t.Fatalf("the probe tried %d targets, want %d:\n%s", tried, len(targets), report)
	}
	for name, want := range controls {
		if !strings.Contains(answers[name], want) {
			t.Errorf("control %s answered %q, want %q: the probe cannot reach even what it may, so its other findings show nothing", name, answers[name], want)
		}
	}
	reached := 0
	for name, answer := range answers {
		if _, ok := controls[name]; ok || (name == "team-b-web" && !strings.Contains(answer, "team-b-"+id)) {
			continue
		}
		reached++
		t.Errorf("a tenant container reached %s: %s", name, answer)
	}
	for _, sock := range []string{"/var/run/docker.sock", "/run/docker.sock"} {
		if !strings.Contains(report, "file "+sock+" absent") {
			t.Errorf("%s is not absent in the tenant container:\n%s", sock, report)
		}
	}
	m := regexp.MustCompile(`(?m)^pids (\d+) (.*)$`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no pids line:\n%s", report)
	}
	if n, _ := strconv.Atoi(m[1]); n >= confinePidsLimit || !strings.Contains(m[2], "resource temporarily unavailable") {
		t.Errorf("the probe started %s processes (%s), want fewer than the limit of %d and then a refusal", m[1], m[2], confinePidsLimit)
	}
	nnp := noNewPrivilegesExpected(t, cli, envA)
	got := regexp.MustCompile(`(?m)^status NoNewPrivs (\d)$`).FindStringSubmatch(report)
	switch {
	case got == nil:
		t.Errorf("no NoNewPrivs line:\n%s", report)
	case nnp != "" && got[1] != "1":
		t.Errorf("no-new-privileges is not set in the tenant container although %s", nnp)
	case nnp == "":
		nnp = "not applied by this engine (its Swarm API drops Privileges.NoNewPrivileges; docs/security.md)"
		if got[1] == "1" {
			nnp = "set"
		}
	}
	if !t.Failed() {
		summary.Line(t, "confinement: a tenant container reached %d of %d forbidden targets (Docker API, control plane, Postgres, gateway feed/metrics/private, another team; controls reached), Docker socket absent, processes capped at %d; no-new-privileges %s",
			reached, tried-len(controls), confinePidsLimit, nnp)
	}
}

// secondTeamToken makes team B (its owner and an all-scope token) in dev's
// database.
func secondTeamToken(t *testing.T, dbURL string) string {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := store.New(pool)
	u, team, err := appservice.Signup(ctx, st, auth.TestArgon2, appservice.SignupRequest{Email: "b@example.com", Password: "correct horse battery", TeamName: "Team B"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := appservice.CreateToken(ctx, st, appservice.Actor{TeamID: team.ID, UserID: u.ID, Scopes: auth.ScopesOf(auth.RoleOwner)},
		appservice.TokenRequest{Name: "b", Scopes: auth.Strings(auth.ScopesOf(auth.RoleOwner))}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// applyAndWait applies and deploys doc and waits for its one deployment to
// succeed; it returns the environment's id.
func applyAndWait(t *testing.T, base, token, doc string) string {
	t.Helper()
	var applied struct {
		Deployments []struct {
			ID            string `json:"id"`
			EnvironmentID string `json:"environment_id"`
		} `json:"deployments"`
	}
	api(t, "POST", base+"/api/v1/applications/apply?deploy=true", token, "application/toml", doc, &applied)
	if len(applied.Deployments) != 1 {
		t.Fatalf("apply queued %d deployments, want 1", len(applied.Deployments))
	}
	dep := applied.Deployments[0]
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var d struct {
			State        string `json:"state"`
			Terminal     bool   `json:"terminal"`
			ErrorCode    string `json:"error_code"`
			ErrorMessage string `json:"error_message"`
		}
		api(t, "GET", base+"/api/v1/deployments/"+dep.ID, token, "", "", &d)
		if d.State == "succeeded" {
			return dep.EnvironmentID
		}
		if d.Terminal {
			t.Fatalf("deployment ended %s: %s %s", d.State, d.ErrorCode, d.ErrorMessage)
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment still %s after 4 minutes", d.State)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// taskAddresses are the overlay addresses of an environment's running tasks.
func taskAddresses(t *testing.T, cli *client.Client, envID string) []string {
	t.Helper()
	tasks, err := cli.TaskList(context.Background(), dockerswarm.TaskListOptions{Filters: filters.NewArgs(
		filters.Arg("label", slwswarm.LabelEnv+"="+envID), filters.Arg("desired-state", "running"))})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		for _, na := range task.NetworksAttachments {
			for _, a := range na.Addresses {
				ip, _, _ := strings.Cut(a, "/")
				out = append(out, ip)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("environment %s has no task addresses", envID)
	}
	return out
}

// probeReport reads the probe service's log until its "done nonce" line.
func probeReport(t *testing.T, cli *client.Client, envID, nonce string) string {
	t.Helper()
	ctx := context.Background()
	name := slwswarm.ServiceName(store.ShortID(envID), "probe")
	deadline := time.Now().Add(3 * time.Minute)
	var last string
	for {
		// Each task's log on its own: a service's log interleaves its
		// tasks' lines in no particular order, and a redeployment starts
		// a new task beside the one it replaces.
		tasks, err := cli.TaskList(ctx, dockerswarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", name))})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			rc, err := cli.TaskLogs(ctx, task.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
			if err != nil {
				continue // a task being removed
			}
			var out, errs bytes.Buffer
			_, _ = stdcopy.StdCopy(&out, &errs, io.LimitReader(rc, 4<<20))
			rc.Close()
			text := out.String()
			if i := strings.Index(text, "done "+nonce); i >= 0 {
				// This run's lines: after an earlier run's done line, if
				// the same task ran it.
				start := strings.LastIndex(text[:i], "done ")
				if start < 0 {
					start = 0
				}
				return text[start:i]
			}
			last = text + errs.String()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the probe did not finish in 3 minutes; its last task's log:\n%s", last)
		}
		time.Sleep(time.Second)
	}
}

// noNewPrivilegesExpected says why the probe must run with no_new_privs
// ("" when this engine does not apply it): the engine kept the field in
// the service's spec, or its daemon sets it for every container.
func noNewPrivilegesExpected(t *testing.T, cli *client.Client, envID string) string {
	t.Helper()
	ctx := context.Background()
	svc, _, err := cli.ServiceInspectWithRaw(ctx, slwswarm.ServiceName(store.ShortID(envID), "probe"), dockerswarm.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := svc.Spec.TaskTemplate.Resources; r == nil || r.Limits == nil || r.Limits.Pids != confinePidsLimit {
		t.Errorf("probe resources %+v, want the pids limit %d", r, confinePidsLimit)
	}
	if p := svc.Spec.TaskTemplate.ContainerSpec.Privileges; p != nil && p.NoNewPrivileges {
		return "the engine kept Privileges.NoNewPrivileges in the service spec"
	}
	info, err := cli.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range info.SecurityOptions {
		if strings.Contains(o, "no-new-privileges") {
			return "the daemon sets no-new-privileges for every container"
		}
	}
	return ""
}
