package multinode_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/app/api"
	apiclient "github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/routelive"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/registry"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/multinode/harness"
)

// stack is Slipway running against the cluster: serve on node 2, the
// worker on node 1 (each talking to its own node's engine, as on three
// machines), a database of its own and a team.
type stack struct {
	c      *harness.Cluster
	st     *store.Store
	team   chaostest.Team
	api    *apiclient.Client
	srv    *chaostest.Server
	worker *chaostest.Process
	// image is the slipway image every node holds; feedURL is serve's
	// route feed on the host's switch address, behind gatewayToken.
	image        string
	feedURL      string
	gatewayToken string
}

// startStack starts serve and worker; the embedded registry goes to
// node 3 (labelled for it), so draining the worker's node leaves it up.
func startStack(t *testing.T, c *harness.Cluster) *stack {
	t.Helper()
	ctx := context.Background()
	bin := chaostest.Binary(t)
	url, st := chaostest.Database(t)
	team := chaostest.NewTeam(t, st, swarmtest.ID())
	// Whatever the team deployed goes when the test ends (registered
	// before the processes start, so it runs after they are killed).
	t.Cleanup(func() { swarmtest.RemoveAndCheck(t, c.Manager(), swarm.LabelTeam+"="+team.Team.ID) })

	// The slipway image the registry and its relay run, on every node.
	img, err := gatewayctl.New(swarmtest.Client(t), nil, "").BuildDevImage(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	c.LoadImage(t, img)
	setNodeLabel(t, c, c.Node(3), registry.NodeLabel, "true")

	// Gateways run on the nodes labelled for ingress (gatewayOnIngressNode
	// starts their agent) and read serve's feed on the host's switch
	// address.
	token := swarmtest.ID() + swarmtest.ID()
	tokenFile := filepath.Join(t.TempDir(), "gateway-token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	feedAddr := c.HostIP + ":" + strconv.Itoa(freePortOn(t, c.HostIP))
	common := []string{
		"SLIPWAY_REGISTRY_IMAGE=" + img,
		"SLIPWAY_GIT_ALLOW_FILE_URLS=true",
		"SLIPWAY_IMAGES_PULL=true",
		"SLIPWAY_GATEWAY=nodes",
		// Registries the test runs on the host's switch address.
		"SLIPWAY_SECURITY_ALLOWED_OUTBOUND_NETWORKS=" + c.HostIP + "/32",
	}
	srv := chaostest.StartServe(t, bin, url, append([]string{"DOCKER_HOST=" + c.Node(2).Host,
		"SLIPWAY_INGRESS_FEED_ADDR=" + feedAddr, "SLIPWAY_INGRESS_GATEWAY_TOKEN_FILE=" + tokenFile}, common...)...)
	worker := chaostest.StartWorker(t, bin, url, "worker", append([]string{
		"DOCKER_HOST=" + c.Node(1).Host,
		// Drift scans often enough for the gateway scenario to wait for
		// one.
		"SLIPWAY_RECONCILIATION_SCAN_INTERVAL_SECONDS=5",
		// The worker runs on the host, not in node 1's network namespace:
		// it reaches the registry's API through node 1's relay port.
		"SLIPWAY_REGISTRY_API_URL=http://" + c.Node(1).IP + ":5000",
	}, common...)...)
	return &stack{c: c, st: st, team: team, api: team.Client(t, srv), srv: srv, worker: worker,
		image: img, feedURL: "http://" + feedAddr, gatewayToken: token}
}

// freePortOn returns a TCP port nothing listens on at ip right now.
func freePortOn(t *testing.T, ip string) int {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func setNodeLabel(t *testing.T, c *harness.Cluster, n *harness.Node, key, value string) {
	t.Helper()
	updateNode(t, c, n, func(spec *dockerswarm.NodeSpec) {
		if spec.Labels == nil {
			spec.Labels = map[string]string{}
		}
		spec.Labels[key] = value
	})
}

func updateNode(t *testing.T, c *harness.Cluster, n *harness.Node, change func(*dockerswarm.NodeSpec)) {
	t.Helper()
	ctx := context.Background()
	node, _, err := c.Manager().NodeInspectWithRaw(ctx, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	change(&node.Spec)
	if err := c.Manager().NodeUpdate(ctx, node.ID, node.Version, node.Spec); err != nil {
		t.Fatal(err)
	}
}

// deploy applies the manifest with a deployment and waits for it.
func (s *stack) deploy(t *testing.T, manifest string) (api.Deployment, string, string) {
	t.Helper()
	return s.deployAs(t, s.api, manifest)
}

// deployAs is deploy with another team's client.
func (s *stack) deployAs(t *testing.T, cl *apiclient.Client, manifest string) (api.Deployment, string, string) {
	t.Helper()
	res, err := cl.Apply(context.Background(), []byte(manifest), apiclient.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deployments) != 1 {
		t.Fatalf("apply made %d deployments, want 1", len(res.Deployments))
	}
	d := res.Deployments[0]
	state, code, msg := chaostest.WaitDeployment(t, cl, d.ID, 5*time.Minute)
	if state != string(store.StateSucceeded) && code == "" {
		t.Fatalf("deployment %s ended %s without a code: %s", d.ID, state, msg)
	}
	return d, code, msg
}

// serviceOf is the environment's Swarm service of a manifest service.
func (s *stack) serviceOf(t *testing.T, envID, name string) dockerswarm.Service {
	t.Helper()
	list, err := s.c.Manager().ServiceList(context.Background(), dockerswarm.ServiceListOptions{Filters: filters.NewArgs(
		filters.Arg("label", swarm.LabelEnv+"="+envID), filters.Arg("label", swarm.LabelService+"="+name))})
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range list {
		if svc.Spec.Labels[swarm.LabelJob] == "" {
			return svc
		}
	}
	t.Fatalf("no service %s in environment %s", name, envID)
	return dockerswarm.Service{}
}

// warnings are the warnings recorded on deployment id.
func (s *stack) warnings(t *testing.T, id string) []string {
	t.Helper()
	d, err := s.st.GetDeployment(context.Background(), s.team.Team.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.DeploymentWarnings(d)
}

// liveGateways names the gateways serve counts: those that reported
// within routelive.StaleAfter.
func (s *stack) liveGateways(t *testing.T) []string {
	t.Helper()
	reports, err := s.st.ListGatewayReports(context.Background(), time.Now().Add(-routelive.StaleAfter))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(reports))
	for _, r := range reports {
		names = append(names, r.Gateway)
	}
	return names
}

// tasks lists a service's tasks.
func (s *stack) tasks(t *testing.T, serviceID string) []dockerswarm.Task {
	t.Helper()
	list, err := s.c.Manager().TaskList(context.Background(), dockerswarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", serviceID))})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// runningPerNode counts a service's running tasks by node hostname.
func (s *stack) runningPerNode(t *testing.T, serviceID string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, task := range s.tasks(t, serviceID) {
		if task.DesiredState == dockerswarm.TaskStateRunning && task.Status.State == dockerswarm.TaskStateRunning {
			out[s.c.NodeByID(task.NodeID).Hostname]++
		}
	}
	return out
}

// waitOneTaskPerNode waits until the service runs one task on each of
// the three nodes, and fails if a node rejected one for lack of its image.
func (s *stack) waitOneTaskPerNode(t *testing.T, serviceID string) {
	t.Helper()
	chaostest.WaitFor(t, time.Minute, "one running task of service "+serviceID+" on each node", func() bool {
		per := s.runningPerNode(t, serviceID)
		return len(per) == 3 && per[s.c.Node(1).Hostname] == 1 && per[s.c.Node(2).Hostname] == 1 && per[s.c.Node(3).Hostname] == 1
	})
	if bad := s.noSuchImage(t, serviceID); len(bad) > 0 {
		t.Fatalf("tasks rejected for lack of the image: %q", bad)
	}
}

// noSuchImage lists the service's tasks that a node rejected for lack of
// the image.
func (s *stack) noSuchImage(t *testing.T, serviceID string) []string {
	t.Helper()
	var out []string
	for _, task := range s.tasks(t, serviceID) {
		if msg := task.Status.Err; strings.Contains(msg, "No such image") || strings.Contains(msg, "pull access denied") {
			out = append(out, s.c.NodeByID(task.NodeID).Hostname+": "+msg)
		}
	}
	return out
}

// gitRepo is a repository on disk (file://, which the worker may read
// with SLIPWAY_GIT_ALLOW_FILE_URLS) holding a FROM-scratch web image.
func gitRepo(t *testing.T) string {
	t.Helper()
	g := pipelinetest.NewGitRepo(t)
	g.Write("bin/web", webBinary(t), 0o755)
	g.Write("Dockerfile", []byte("FROM scratch\nCOPY bin/web /web\nENTRYPOINT [\"/web\"]\n"), 0o644)
	g.Commit("web")
	return g.URL()
}

// serveGitHTTP serves the bare repository of fileURL (a gitRepo) over
// git's smart HTTP protocol on ip, as a private git server would, and
// returns its http:// URL. git-http-backend (git's own CGI program, run
// without a shell) answers: it serves the shallow fetches the worker
// makes, which go-git's in-process server refuses.
func serveGitHTTP(t *testing.T, ip, fileURL string) string {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	dir := strings.TrimPrefix(fileURL, "file://")
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Dir(dir), "GIT_HTTP_EXPORT_ALL=1"},
	}
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: backend, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/" + filepath.Base(dir)
}

// webBinary is swarmtest's web server, built static.
func webBinary(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "web")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, filepath.Join(swarmtest.ImagesDir(), "web"))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gitManifest is a git-built web service with replicas replicas.
func gitManifest(app, repo string, replicas int) string {
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
replicas = %d
[spec.services.source]
type = "git"
repository = { url = %q, branch = "main" }
[spec.services.source.build]
type = "docker"
[spec.services.healthcheck]
type = "http"
port = 8080
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
`, app, replicas, repo)
}
