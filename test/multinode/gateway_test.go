package multinode_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
	"github.com/goccy/go-yaml"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayagent"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// gatewayOnIngressNode labels node 2 for ingress and runs the gateway
// agent there as deploy/slipway-stack.yml does (a global service on the
// labelled nodes, the token a Swarm secret, the node's Docker socket):
// a route to a service with a task on each node is served on node 2's
// port 80 by node 2's gateway, which reaches the task on node 3 over the
// environment's overlay; a second deployment gives the service the
// gateway's address there (SLIPWAY_INGRESS_PROXIES); deleting the
// application makes the gateway leave the overlay, which is removed.
func gatewayOnIngressNode(t *testing.T, s *stack) {
	t.Helper()
	began := time.Now()
	ctx := context.Background()
	c := s.c
	node2 := c.Node(2)
	setNodeLabel(t, c, node2, gatewayagent.NodeLabel, "true")
	t.Cleanup(func() {
		updateNode(t, c, node2, func(spec *dockerswarm.NodeSpec) { delete(spec.Labels, gatewayagent.NodeLabel) })
	})
	startAgent(t, s)

	img := swarmtest.Image(t, "web")
	c.LoadImage(t, img)
	host := "edge-" + swarmtest.ID() + ".test"
	start := time.Now()
	d, code, msg := s.deploy(t, routedManifest("edge", img, host, "1"))
	firstDeploy := time.Since(start)
	if code != "" {
		t.Fatalf("routed deployment failed: %s: %s", code, msg)
	}
	web := s.serviceOf(t, d.EnvironmentID, "web")
	chaostest.WaitFor(t, time.Minute, "one running task of the routed web on each node", func() bool {
		per := s.runningPerNode(t, web.ID)
		return len(per) == 3 && per[c.Node(1).Hostname] == 1 && per[node2.Hostname] == 1 && per[c.Node(3).Hostname] == 1
	})
	for _, n := range []int{1, 3} {
		if _, err := c.Node(n).Client.ContainerInspect(ctx, gatewayctl.ContainerName); err == nil {
			t.Fatalf("node %d, not labelled for ingress, runs a gateway", n)
		}
	}
	// The container of web's task on node 3 answers /whoami with its
	// hostname, the first 12 characters of its ID.
	var onNode3 string
	for _, task := range s.tasks(t, web.ID) {
		if task.NodeID == c.Node(3).ID && task.Status.State == dockerswarm.TaskStateRunning && task.Status.ContainerStatus != nil {
			onNode3 = task.Status.ContainerStatus.ContainerID[:12]
		}
	}
	url := "http://" + node2.IP + ":80"
	seen := map[string]bool{}
	chaostest.WaitFor(t, time.Minute, "node 2's gateway to answer from web's task on node 3", func() bool {
		status, body := get(url+"/whoami", host)
		if status == http.StatusOK {
			seen[body] = true
		}
		return seen[onNode3]
	})
	summary.Line(t, "multinode: a route is served on node 2's port 80 by node 2's gateway (the only ingress node) from web's task on node 3 (tasks answering: %d; the routed deployment took %s, its routes live on that gateway included)", len(seen), firstDeploy.Round(100*time.Millisecond))

	// A second deployment renders the address node 2's agent reported.
	overlay := swarm.IngressNetworkName(store.ShortID(d.EnvironmentID))
	gw, err := node2.Client.ContainerInspect(ctx, gatewayctl.ContainerName)
	if err != nil {
		t.Fatal(err)
	}
	ep := gw.NetworkSettings.Networks[overlay]
	if ep == nil || ep.IPAddress == "" {
		t.Fatalf("node 2's gateway is not on %s: %v", overlay, gw.NetworkSettings.Networks)
	}
	if _, code, msg := s.deploy(t, routedManifest("edge", img, host, "2")); code != "" {
		t.Fatalf("second routed deployment failed: %s: %s", code, msg)
	}
	var proxies string
	chaostest.WaitFor(t, time.Minute, "web's version 2 to answer through node 2's gateway", func() bool {
		if status, v := get(url+"/version", host); status != http.StatusOK || v != "2" {
			return false
		}
		_, proxies = get(url+"/env/"+swarm.IngressProxiesEnv, host)
		return true
	})
	if proxies != ep.IPAddress {
		t.Fatalf("%s = %q, want node 2's gateway's address on %s, %s", swarm.IngressProxiesEnv, proxies, overlay, ep.IPAddress)
	}

	// Deleting the application: the gateway leaves the overlay, so the
	// teardown can remove it.
	start = time.Now()
	if err := s.api.DeleteApplication(ctx, "edge"); err != nil {
		t.Fatal(err)
	}
	chaostest.WaitFor(t, 2*time.Minute, "the deleted application's ingress overlay to be removed", func() bool {
		list, err := c.Manager().NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("name", overlay))})
		return err == nil && len(list) == 0
	})
	summary.Line(t, "multinode: routed services get node 2's gateway's address (%s=%s); a deleted application's overlay is left by the gateway and removed (%s after the delete; the gateway scenario took %s)", swarm.IngressProxiesEnv, proxies, time.Since(start).Round(100*time.Millisecond), time.Since(began).Round(time.Second))
}

// startAgent creates the gateway agent's global service from the
// stack file's gateway service: its command, placement, secret and
// environment as written there, except what points at things this
// cluster has elsewhere: serve's feed (on the host's switch address, not
// the stack's overlay), the image, node 2's own socket (each node of the
// harness has its own path, so only node 2 may be labelled) and a
// temporary socket directory.
func startAgent(t *testing.T, s *stack) {
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
	socketDir := t.TempDir()
	// The socket directory is mounted at its host path, as in the stack.
	stands := map[string]mount.Mount{
		"/var/run/docker.sock":     {Type: mount.TypeBind, Source: strings.TrimPrefix(c.Node(2).Host, "unix://"), Target: "/var/run/docker.sock"},
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
				Mounts: binds,
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
		n2 := c.Node(2).Client
		if err := n2.ContainerRemove(ctx, gatewayctl.ContainerName, container.RemoveOptions{Force: true}); err != nil {
			t.Logf("remove node 2's gateway: %v", err)
		}
		_ = n2.NetworkRemove(ctx, gatewayctl.ContainerName)
		_ = n2.VolumeRemove(ctx, gatewayctl.ContainerName+"-data", true)
		chaostest.WaitFor(t, time.Minute, "the agent's container on node 2 to stop", func() bool {
			list, err := n2.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", "com.docker.swarm.service.id="+svc.ID))})
			return err == nil && len(list) == 0
		})
		_ = mgr.SecretRemove(ctx, secret.ID)
		vols, _ := n2.VolumeList(ctx, volume.ListOptions{})
		for _, v := range vols.Volumes {
			if v.Name == gatewayctl.ContainerName+"-data" {
				t.Errorf("node 2 kept the gateway's volume")
			}
		}
	})
	chaostest.WaitFor(t, 2*time.Minute, "node 2's gateway container to run", func() bool {
		gw, err := c.Node(2).Client.ContainerInspect(ctx, gatewayctl.ContainerName)
		return err == nil && gw.State != nil && gw.State.Running
	})
}

// stackDeclaration is what the test reads of a service in
// deploy/slipway-stack.yml.
type stackDeclaration struct {
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Secrets     []string          `yaml:"secrets"`
	Volumes     []string          `yaml:"volumes"`
	Deploy      struct {
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
