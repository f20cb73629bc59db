package multinode_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
	"github.com/goccy/go-yaml"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayagent"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/multinode/harness"
	"github.com/slipwayhq/slipway/test/summary"
)

// gatewaysOnIngressNodes labels nodes 2 and 3 for ingress and runs the
// gateway agent as deploy/slipway-stack.yml does (a global service on the
// labelled nodes, the token a Swarm secret, each node's own Docker
// socket):
//   - the first deployment of a routed service (a task on each node)
//     already gives it both gateways' addresses on the environment's
//     overlay (SLIPWAY_INGRESS_PROXIES), and no drift repair updates it
//     afterwards;
//   - both gateways serve the route, each from a task on another node;
//   - restarting the agents (a forced update, as an upgrade does) leaves
//     both gateway containers running, untouched;
//   - removing node 2's label removes its gateway (port 80 of node 2
//     stops answering) and serve forgets it, so the next deployment
//     trusts node 3's gateway only; labelling node 2 again serves the
//     route there again;
//   - deleting the application makes the gateways leave its overlay,
//     which is removed.
func gatewaysOnIngressNodes(t *testing.T, s *stack) {
	t.Helper()
	began := time.Now()
	ctx := context.Background()
	c := s.c
	node1, node2, node3 := c.Node(1), c.Node(2), c.Node(3)
	for _, n := range []*harness.Node{node2, node3} {
		setNodeLabel(t, c, n, gatewayagent.NodeLabel, "true")
		t.Cleanup(func() {
			updateNode(t, c, n, func(spec *dockerswarm.NodeSpec) { delete(spec.Labels, gatewayagent.NodeLabel) })
		})
	}
	agent := startAgent(t, s, node2, node3)
	// A deployment waits for the gateways serve knows: those that
	// reported what they serve.
	chaostest.WaitFor(t, time.Minute, "both gateways to report to serve", func() bool {
		live := s.liveGateways(t)
		return slices.Contains(live, gatewayctl.ContainerName+"@"+node2.Hostname) && slices.Contains(live, gatewayctl.ContainerName+"@"+node3.Hostname)
	})

	img := swarmtest.Image(t, "web")
	c.LoadImage(t, img)
	host := "edge-" + swarmtest.ID() + ".test"
	start := time.Now()
	d, code, msg := s.deploy(t, routedManifest("edge", img, host, "1"))
	firstDeploy := time.Since(start)
	if code != "" {
		t.Fatalf("routed deployment failed: %s: %s", code, msg)
	}
	deployed := time.Now()
	web := s.serviceOf(t, d.EnvironmentID, "web")
	overlay := swarm.IngressNetworkName(store.ShortID(d.EnvironmentID))
	addr2, addr3 := gatewayAddressOn(t, node2, overlay), gatewayAddressOn(t, node3, overlay)
	if got := specEnv(web, swarm.IngressProxiesEnv); !sameAddresses(got, addr2, addr3) {
		t.Fatalf("the first deployment's web trusts %s=%q, want both gateways' addresses on %s: %s (node 2), %s (node 3)", swarm.IngressProxiesEnv, got, overlay, addr2, addr3)
	}
	if warnings := s.warnings(t, d.ID); len(warnings) > 0 {
		t.Fatalf("the first routed deployment has warnings: %q", warnings)
	}
	chaostest.WaitFor(t, time.Minute, "one running task of the routed web on each node", func() bool {
		per := s.runningPerNode(t, web.ID)
		return len(per) == 3 && per[node1.Hostname] == 1 && per[node2.Hostname] == 1 && per[node3.Hostname] == 1
	})
	if _, err := node1.Client.ContainerInspect(ctx, gatewayctl.ContainerName); err == nil {
		t.Fatal("node 1, not labelled for ingress, runs a gateway")
	}
	// Each gateway serves the route from a task on another node.
	seen2 := servedFrom(t, s, web.ID, node2, node3, host)
	seen3 := servedFrom(t, s, web.ID, node3, node1, host)
	summary.Line(t, "multinode: a route is served on ports 80 of nodes 2 and 3 by their gateways (the ingress nodes), node 2's from web's task on node 3 and node 3's from node 1's (tasks answering: %d and %d); the first routed deployment took %s, its gateways joining its overlay and its routes live on both included", seen2, seen3, firstDeploy.Round(100*time.Millisecond))

	// No drift repair touches web: a scan that began after the deployment
	// finds nothing to roll in (before, the first deployment's services
	// trusted no gateway until such a scan updated them).
	waitDriftScan(t, s, deployed)
	if now := s.serviceOf(t, d.EnvironmentID, "web"); now.Version.Index != web.Version.Index {
		t.Fatalf("web was updated after its first deployment (version %d, now %d, %s=%q)", web.Version.Index, now.Version.Index, swarm.IngressProxiesEnv, specEnv(now, swarm.IngressProxiesEnv))
	}
	summary.Line(t, "multinode: the first routed deployment's service already trusts both ingress gateways (%s=%s), and a drift scan after it updates nothing", swarm.IngressProxiesEnv, specEnv(web, swarm.IngressProxiesEnv))

	// Restarting the agents, as an upgrade does: each asks serve, its node
	// is still an ingress node, and its gateway is left running.
	kept := map[int]string{}
	for _, n := range []*harness.Node{node2, node3} {
		kept[n.Index] = gatewayRun(t, n)
	}
	restartAgents(t, s, agent, node2, node3)
	for _, n := range []*harness.Node{node2, node3} {
		if got := gatewayRun(t, n); got != kept[n.Index] {
			t.Fatalf("node %d's gateway was %s before the agents restarted and is %s after", n.Index, kept[n.Index], got)
		}
	}

	// Removing node 2's label: its agent stops, serve says the node is no
	// longer an ingress node, the agent removes its gateway, and serve
	// forgets it.
	start = time.Now()
	updateNode(t, c, node2, func(spec *dockerswarm.NodeSpec) { delete(spec.Labels, gatewayagent.NodeLabel) })
	url2, url3 := "http://"+node2.IP+":80", "http://"+node3.IP+":80"
	chaostest.WaitFor(t, time.Minute, "node 2's gateway container to be removed", func() bool {
		_, err := node2.Client.ContainerInspect(ctx, gatewayctl.ContainerName)
		return cerrdefs.IsNotFound(err)
	})
	removed := time.Since(start)
	if status, body := get(url2+"/whoami", host); status != 0 {
		t.Fatalf("node 2's port 80 still answers without its gateway: %d %q", status, body)
	}
	if slices.Contains(s.liveGateways(t), gatewayctl.ContainerName+"@"+node2.Hostname) {
		t.Fatal("serve still counts node 2's removed gateway")
	}
	if _, code, msg := s.deploy(t, routedManifest("edge", img, host, "2")); code != "" {
		t.Fatalf("routed deployment with node 2 unlabelled failed: %s: %s", code, msg)
	}
	if got := specEnv(s.serviceOf(t, d.EnvironmentID, "web"), swarm.IngressProxiesEnv); got != addr3 {
		t.Fatalf("with node 2 unlabelled web trusts %s=%q, want node 3's gateway's address %s only", swarm.IngressProxiesEnv, got, addr3)
	}
	chaostest.WaitFor(t, time.Minute, "web's version 2 to answer through node 3's gateway", func() bool {
		status, v := get(url3+"/version", host)
		return status == http.StatusOK && v == "2"
	})

	// Labelled again, node 2 runs a gateway that serves the route.
	setNodeLabel(t, c, node2, gatewayagent.NodeLabel, "true")
	chaostest.WaitFor(t, 2*time.Minute, "node 2's new gateway to serve web's version 2", func() bool {
		status, v := get(url2+"/version", host)
		return status == http.StatusOK && v == "2"
	})
	summary.Line(t, "multinode: restarting the gateway agents keeps both gateways running; removing node 2's ingress label removes its gateway (%s after the update; port 80 there stops answering) and the next deployment trusts node 3's only; labelling it again serves the route there", removed.Round(100*time.Millisecond))

	// Deleting the application: the gateways leave the overlay, so the
	// teardown can remove it.
	start = time.Now()
	if err := s.api.DeleteApplication(ctx, "edge"); err != nil {
		t.Fatal(err)
	}
	chaostest.WaitFor(t, 2*time.Minute, "the deleted application's ingress overlay to be removed", func() bool {
		list, err := c.Manager().NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("name", overlay))})
		return err == nil && len(list) == 0
	})
	summary.Line(t, "multinode: a deleted application's overlay is left by both gateways and removed (%s after the delete; the gateway scenario took %s)", time.Since(start).Round(100*time.Millisecond), time.Since(began).Round(time.Second))
}

// gatewayAddressOn is node n's gateway's address on network.
func gatewayAddressOn(t *testing.T, n *harness.Node, network string) string {
	t.Helper()
	gw, err := n.Client.ContainerInspect(context.Background(), gatewayctl.ContainerName)
	if err != nil {
		t.Fatalf("node %d's gateway: %v", n.Index, err)
	}
	ep := gw.NetworkSettings.Networks[network]
	if ep == nil || ep.IPAddress == "" {
		t.Fatalf("node %d's gateway is not on %s: %v", n.Index, network, gw.NetworkSettings.Networks)
	}
	return ep.IPAddress
}

// gatewayRun identifies the run of node n's gateway container: its ID and
// when it started.
func gatewayRun(t *testing.T, n *harness.Node) string {
	t.Helper()
	gw, err := n.Client.ContainerInspect(context.Background(), gatewayctl.ContainerName)
	if err != nil {
		t.Fatalf("node %d's gateway: %v", n.Index, err)
	}
	return gw.ID[:12] + " started " + gw.State.StartedAt
}

// specEnv is the value of key in the environment of the service's spec.
func specEnv(svc dockerswarm.Service, key string) string {
	for _, kv := range svc.Spec.TaskTemplate.ContainerSpec.Env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v
		}
	}
	return ""
}

// sameAddresses says whether the comma-separated list holds exactly want.
func sameAddresses(list string, want ...string) bool {
	got := strings.Split(list, ",")
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	return slices.Equal(got, want)
}

// servedFrom waits until node gw's port 80 answers the route from web's
// task on node from (each task answers /whoami with its container's
// hostname), and returns how many tasks answered on the way.
func servedFrom(t *testing.T, s *stack, serviceID string, gw, from *harness.Node, host string) int {
	t.Helper()
	var want string
	for _, task := range s.tasks(t, serviceID) {
		if task.NodeID == from.ID && task.Status.State == dockerswarm.TaskStateRunning && task.Status.ContainerStatus != nil {
			want = task.Status.ContainerStatus.ContainerID[:12]
		}
	}
	seen := map[string]bool{}
	chaostest.WaitFor(t, time.Minute, fmt.Sprintf("node %d's gateway to answer from web's task on node %d", gw.Index, from.Index), func() bool {
		if status, body := get("http://"+gw.IP+":80/whoami", host); status == http.StatusOK {
			seen[body] = true
		}
		return seen[want]
	})
	return len(seen)
}

// waitDriftScan waits until a drift scan (the worker's reconcile job)
// that began after since has completed.
func waitDriftScan(t *testing.T, s *stack, since time.Time) {
	t.Helper()
	chaostest.WaitFor(t, 2*time.Minute, "a drift scan begun after the deployment to complete", func() bool {
		var n int
		err := s.st.Pool().QueryRow(context.Background(), `
			SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'completed' AND attempted_at > $2`,
			jobs.ReconcileArgs{}.Kind(), since).Scan(&n)
		return err == nil && n > 0
	})
}

// restartAgents force-updates the agent service (as an upgrade does) and
// waits until the new agent runs on each of nodes.
func restartAgents(t *testing.T, s *stack, serviceID string, nodes ...*harness.Node) {
	t.Helper()
	ctx := context.Background()
	mgr := s.c.Manager()
	svc, _, err := mgr.ServiceInspectWithRaw(ctx, serviceID, dockerswarm.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.TaskTemplate.ForceUpdate++
	force := svc.Spec.TaskTemplate.ForceUpdate
	if _, err := mgr.ServiceUpdate(ctx, svc.ID, svc.Version, svc.Spec, dockerswarm.ServiceUpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	chaostest.WaitFor(t, 2*time.Minute, "the restarted agents to run", func() bool {
		running := map[string]bool{}
		for _, task := range s.tasks(t, serviceID) {
			if task.Spec.ForceUpdate == force && task.Status.State == dockerswarm.TaskStateRunning {
				running[task.NodeID] = true
			}
		}
		for _, n := range nodes {
			if !running[n.ID] {
				return false
			}
		}
		return true
	})
}

// startAgent creates the gateway agent's global service from the
// stack file's gateway service: its command, placement, stop grace
// period, secret and environment as written there, except what points at
// things this cluster has elsewhere: serve's feed (on the host's switch
// address, not the stack's overlay), the image, each node's own socket
// (harness.Cluster.SocketTemplate) and a temporary socket directory per
// node (the nodes share one filesystem). It waits until the gateway runs
// on each of nodes and returns the service's ID.
func startAgent(t *testing.T, s *stack, nodes ...*harness.Node) string {
	t.Helper()
	ctx := context.Background()
	c := s.c
	mgr := c.Manager()
	gw := stackService(t, "gateway")
	if gw.Deploy.Mode != "global" || len(gw.Deploy.Placement.Constraints) != 1 || gw.Deploy.Placement.Constraints[0] != "node.labels."+gatewayagent.NodeLabel+" == true" {
		t.Fatalf("the stack's gateway service is not global on the nodes labelled %s: %+v", gatewayagent.NodeLabel, gw.Deploy)
	}
	if len(gw.Secrets) != 1 || gw.Environment[ingress.EnvTokenFile] != "/run/secrets/"+gw.Secrets[0] {
		t.Fatalf("the stack's gateway service does not read its token from its secret: %v %v", gw.Secrets, gw.Environment)
	}
	grace, err := time.ParseDuration(gw.StopGracePeriod)
	if err != nil {
		t.Fatalf("the stack's gateway service's stop_grace_period %q: %v", gw.StopGracePeriod, err)
	}
	base := t.TempDir()
	for _, n := range c.Nodes {
		if err := os.Mkdir(filepath.Join(base, n.Hostname), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	socketDir := filepath.Join(base, "{{.Node.Hostname}}")
	// The socket directory is mounted at its host path, as in the stack.
	stands := map[string]mount.Mount{
		"/var/run/docker.sock":     {Type: mount.TypeBind, Source: c.SocketTemplate(), Target: "/var/run/docker.sock"},
		"/var/lib/slipway-gateway": {Type: mount.TypeBind, Source: socketDir, Target: socketDir},
	}
	var binds []mount.Mount
	for _, v := range gw.Volumes {
		_, target, _ := strings.Cut(v, ":")
		m, ok := stands[target]
		if !ok {
			t.Fatalf("the stack's gateway service mounts %s, which this test does not stand in for", v)
		}
		binds = append(binds, m)
	}
	env := []string{"SLIPWAY_GATEWAY_SOCKET_DIR=" + socketDir, gatewayctl.EnvHTTPSPort + "=0"}
	for k, v := range gw.Environment {
		switch k {
		case ingress.EnvControlURL:
			v = s.feedURL
		case gatewayctl.EnvImage:
			v = s.image
		}
		if !strings.HasPrefix(v, "${") {
			env = append(env, k+"="+v)
		}
	}
	for _, name := range []string{"web", "worker"} {
		if got := stackService(t, name).Environment["SLIPWAY_GATEWAY"]; got != "nodes" {
			t.Fatalf("the stack's %s has SLIPWAY_GATEWAY=%q, want nodes", name, got)
		}
	}
	secretName := "slipway-gateway-token-" + swarmtest.ID()
	secret, err := mgr.SecretCreate(ctx, dockerswarm.SecretSpec{
		Annotations: dockerswarm.Annotations{Name: secretName},
		Data:        []byte(s.gatewayToken),
	})
	if err != nil {
		t.Fatal(err)
	}
	spec := dockerswarm.ServiceSpec{
		Annotations: dockerswarm.Annotations{Name: "slipway-gateway-agent"},
		TaskTemplate: dockerswarm.TaskSpec{
			ContainerSpec: &dockerswarm.ContainerSpec{
				Image:   s.image,
				Command: append([]string{"/slipway"}, gw.Command...),
				Env:     env,
				Secrets: []*dockerswarm.SecretReference{{SecretID: secret.ID, SecretName: secretName,
					File: &dockerswarm.SecretReferenceFileTarget{Name: gw.Secrets[0], UID: "0", GID: "0", Mode: 0o400}}},
				Mounts:          binds,
				StopGracePeriod: &grace,
			},
			Placement:     &dockerswarm.Placement{Constraints: gw.Deploy.Placement.Constraints},
			RestartPolicy: &dockerswarm.RestartPolicy{Condition: dockerswarm.RestartPolicyConditionAny},
		},
		Mode: dockerswarm.ServiceMode{Global: &dockerswarm.GlobalService{}},
	}
	svc, err := mgr.ServiceCreate(ctx, spec, dockerswarm.ServiceCreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Registered after the team's cleanup, so it runs before it: the
	// gateway must be gone before the team's networks are removed.
	t.Cleanup(func() {
		ctx := context.Background()
		if err := mgr.ServiceRemove(ctx, svc.ID); err != nil {
			t.Errorf("remove the agent's service: %v", err)
		}
		for _, n := range c.Nodes {
			chaostest.WaitFor(t, time.Minute, fmt.Sprintf("the agent's container on node %d to stop", n.Index), func() bool {
				list, err := n.Client.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", "com.docker.swarm.service.id="+svc.ID))})
				return err == nil && len(list) == 0
			})
			if err := n.Client.ContainerRemove(ctx, gatewayctl.ContainerName, container.RemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
				t.Errorf("remove node %d's gateway: %v", n.Index, err)
			}
			_ = n.Client.NetworkRemove(ctx, gatewayctl.ContainerName)
			_ = n.Client.VolumeRemove(ctx, gatewayctl.ContainerName+"-data", true)
			vols, _ := n.Client.VolumeList(ctx, volume.ListOptions{})
			for _, v := range vols.Volumes {
				if v.Name == gatewayctl.ContainerName+"-data" {
					t.Errorf("node %d kept the gateway's volume", n.Index)
				}
			}
		}
		_ = mgr.SecretRemove(ctx, secret.ID)
	})
	for _, n := range nodes {
		chaostest.WaitFor(t, 2*time.Minute, fmt.Sprintf("node %d's gateway container to run", n.Index), func() bool {
			gw, err := n.Client.ContainerInspect(ctx, gatewayctl.ContainerName)
			return err == nil && gw.State != nil && gw.State.Running
		})
	}
	return svc.ID
}

// stackDeclaration is what the test reads of a service in
// deploy/slipway-stack.yml.
type stackDeclaration struct {
	Command         []string          `yaml:"command"`
	Environment     map[string]string `yaml:"environment"`
	Secrets         []string          `yaml:"secrets"`
	Volumes         []string          `yaml:"volumes"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	Deploy          struct {
		Mode      string `yaml:"mode"`
		Placement struct {
			Constraints []string `yaml:"constraints"`
		} `yaml:"placement"`
	} `yaml:"deploy"`
}

// stackService reads service name of deploy/slipway-stack.yml.
func stackService(t *testing.T, name string) stackDeclaration {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(swarmtest.ImagesDir(), "..", "..", "deploy", "slipway-stack.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]stackDeclaration `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("deploy/slipway-stack.yml: %v", err)
	}
	svc, ok := f.Services[name]
	if !ok {
		t.Fatalf("deploy/slipway-stack.yml has no service %s", name)
	}
	return svc
}

// get sends a GET for host to url and returns the status and the trimmed
// body (0 when the request failed).
func get(url, host string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	req.Host = host
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// routedManifest is the web image with 3 replicas behind a public route
// for host; version is what /version answers.
func routedManifest(app, image, host, version string) string {
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
replicas = 3
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
VERSION = %q
[spec.services.healthcheck]
type = "http"
port = 8080
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5

[[spec.routes]]
hostname = %q
service = "web"
port = 8080
visibility = "public"
`, app, image, version, host)
}
