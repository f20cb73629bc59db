package multinode_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	dockerswarm "github.com/docker/docker/api/types/swarm"

	apiclient "github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/backupctl/backuptest"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayagent"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/multinode/harness"
	"github.com/slipwayhq/slipway/test/summary"
)

// stackName is the stack's namespace, as in `docker stack deploy ...
// slipway`.
const stackName = "slipway"

// TestStack_WholeFile installs Slipway on a three-node Swarm of its own as
// docs/cluster.md tells a newcomer to: the labels, the four secrets made
// as the guide makes them, and every network, volume and service of
// deploy/slipway-stack.yml created as `docker stack deploy` does
// (compose-go reads the file). What this machine lacks is stood in for:
// postgres:15 cannot be pulled, so its image is one built from this
// machine's Debian PostgreSQL binaries (backuptest.PostgresImage), the
// Slipway image is the one built from the binary under test, and each
// node's Docker socket and gateway directory are at the paths of this
// harness (its nodes share one filesystem). Then the first owner signs up
// with the setup token from serve's log, creates an API token on the
// dashboard, and deploys the README's example (its image the test web
// image): its two replicas run, and both ingress nodes' gateways serve its
// route. Then a git-built application with replicas = 3, its repository
// on a private git server the stack's outbound setting allows, runs one
// task on each node, by registry digest.
func TestStack_WholeFile(t *testing.T) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := harness.Start(ctx, harness.Options{Nodes: 3, Managers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("remove the cluster: %v", err)
		}
	})
	mgr := c.Manager()
	slipwayImage, err := gatewayctl.New(swarmtest.Client(t), nil, "").BuildDevImage(ctx, chaostest.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	pgImage, webImage := backuptest.PostgresImage(t), swarmtest.Image(t, "web")
	for _, img := range []string{slipwayImage, pgImage, webImage} {
		c.LoadImage(t, img)
	}

	// docs/cluster.md, step 2: labels, the gateway directory, secrets.
	setNodeLabel(t, c, c.Node(1), "dev.slipway.db", "true")
	for _, n := range []*harness.Node{c.Node(2), c.Node(3)} {
		setNodeLabel(t, c, n, gatewayagent.NodeLabel, "true")
	}
	gatewayDirs := t.TempDir()
	for _, n := range c.Nodes {
		if err := os.Mkdir(filepath.Join(gatewayDirs, n.Hostname), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	pw := randomHex(t, 16)
	secrets := map[string]string{
		"slipway_key":               randomHex(t, 32),
		"slipway_gateway_token":     randomHex(t, 32),
		"slipway_postgres_password": pw,
		"slipway_pgpass":            "postgres:5432:slipway:slipway:" + pw + "\n",
	}
	secretIDs := map[string]string{}
	for name, value := range secrets {
		resp, err := mgr.SecretCreate(ctx, dockerswarm.SecretSpec{Annotations: dockerswarm.Annotations{Name: name}, Data: []byte(value)})
		if err != nil {
			t.Fatal(err)
		}
		secretIDs[name] = resp.ID
	}

	// The git-built application's repository, on a private git server
	// (this host's switch address), which the operator lets tenants reach
	// as docs/cluster.md says.
	repo := serveGitHTTP(t, c.HostIP, gitRepo(t))

	project := loadStack(t, map[string]string{"SLIPWAY_IMAGE": slipwayImage, "SLIPWAY_PUBLIC_URL": "http://" + c.Node(1).IP + ":8080",
		"SLIPWAY_SECURITY_ALLOWED_OUTBOUND_NETWORKS": c.HostIP + "/32"})
	for key, n := range project.Networks {
		if _, err := mgr.NetworkCreate(ctx, n.Name, network.CreateOptions{Driver: n.Driver, Attachable: n.Attachable,
			Labels: map[string]string{"com.docker.stack.namespace": stackName}}); err != nil {
			t.Fatalf("network %s: %v", key, err)
		}
	}
	for name, svc := range project.Services {
		spec := stackServiceSpec(t, c, project, svc, secretIDs, gatewayDirs)
		if name == "postgres" {
			if !strings.HasPrefix(svc.Image, "postgres:") {
				t.Fatalf("the stack's postgres runs %s", svc.Image)
			}
			spec.TaskTemplate.ContainerSpec.Image = pgImage
			spec.TaskTemplate.ContainerSpec.Env = append(spec.TaskTemplate.ContainerSpec.Env, "PG_BIN="+backuptest.PGBin)
		}
		if _, err := mgr.ServiceCreate(ctx, spec, dockerswarm.ServiceCreateOptions{}); err != nil {
			t.Fatalf("service %s: %v", name, err)
		}
	}

	t.Cleanup(func() {
		if t.Failed() {
			reportStack(t, c)
		}
	})

	// The dashboard answers on port 8080 of the manager running web.
	base := "http://" + c.Node(1).IP + ":8080"
	var token string
	chaostest.WaitFor(t, 3*time.Minute, "serve to log its setup token", func() bool {
		token = setupToken(t, c, stackName+"_web")
		return token != ""
	})
	owner := firstOwner(t, base, token)
	cl, err := apiclient.New(base, owner)
	if err != nil {
		t.Fatal(err)
	}

	// The README's example, its image the test web image.
	example := readmeExample(t)
	example = regexp.MustCompile(`image = "[^"]*"`).ReplaceAllString(example, fmt.Sprintf("image = %q", webImage))
	res, err := cl.Apply(ctx, []byte(example), apiclient.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deployments) != 1 {
		t.Fatalf("apply made %d deployments", len(res.Deployments))
	}
	state, code, msg := chaostest.WaitDeployment(t, cl, res.Deployments[0].ID, 5*time.Minute)
	if state != string(store.StateSucceeded) {
		t.Fatalf("the README's example ended %s: %s: %s", state, code, msg)
	}
	for _, n := range []*harness.Node{c.Node(2), c.Node(3)} {
		chaostest.WaitFor(t, time.Minute, fmt.Sprintf("node %d's gateway to serve notes.example.com", n.Index), func() bool {
			status, _ := get("http://"+n.IP+":80/health", "notes.example.com")
			return status == http.StatusOK
		})
	}

	// A git-built application with replicas = 3: the stack's worker
	// clones it over HTTP from the private git server, builds it on its
	// node's engine, pushes it to the embedded registry it starts, and
	// every node pulls it by digest through its relay. The harness-run
	// stack's helpers need only the cluster and the API client.
	s := &stack{c: c, api: cl}
	d, code, msg := s.deploy(t, gitManifest("spread", repo, 3))
	if code != "" {
		t.Fatalf("the git-built application failed: %s: %s", code, msg)
	}
	web := s.serviceOf(t, d.EnvironmentID, "web")
	if img := web.Spec.TaskTemplate.ContainerSpec.Image; !strings.Contains(img, "@sha256:") {
		t.Fatalf("the git-built service runs %s, not an image by registry digest", img)
	}
	s.waitOneTaskPerNode(t, web.ID)
	summary.Line(t, "multinode: deploy/slipway-stack.yml installed whole on 3 nodes (Postgres from Debian binaries), the first owner signed up with serve's setup token, the README's example deployed and served by the gateways of both ingress nodes, and a git-built application (cloned over HTTP from a private git server the stack allows) with 3 replicas running one task on each node by registry digest (%s)", time.Since(began).Round(time.Second))
}

// loadStack reads deploy/slipway-stack.yml as `docker stack deploy`
// would, with env as the shell's environment.
func loadStack(t *testing.T, env map[string]string) *types.Project {
	t.Helper()
	path := filepath.Join(swarmtest.ImagesDir(), "..", "..", "deploy", "slipway-stack.yml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  filepath.Dir(path),
		ConfigFiles: []types.ConfigFile{{Filename: path, Content: b}},
		Environment: env,
	}, func(o *loader.Options) { o.SetProjectName(stackName, true) })
	if err != nil {
		t.Fatalf("deploy/slipway-stack.yml: %v", err)
	}
	return p
}

// stackServiceSpec is the Swarm service `docker stack deploy` makes of
// svc, with the Docker socket and the gateway directory where this
// harness has them, and the Slipway image's entrypoint (the release image
// has /slipway; the test image's is /slipway gateway).
func stackServiceSpec(t *testing.T, c *harness.Cluster, p *types.Project, svc types.ServiceConfig, secretIDs map[string]string, gatewayDirs string) dockerswarm.ServiceSpec {
	t.Helper()
	cs := &dockerswarm.ContainerSpec{Image: svc.Image, Args: svc.Command,
		Labels: map[string]string{"com.docker.stack.namespace": stackName}}
	if svc.Image != "" && !strings.HasPrefix(svc.Image, "postgres:") {
		cs.Command = []string{"/slipway"}
	}
	for k, v := range svc.Environment {
		if v != nil {
			cs.Env = append(cs.Env, k+"="+*v)
		}
	}
	for _, s := range svc.Secrets {
		target := s.Target
		if target == "" {
			target = s.Source
		}
		name := p.Secrets[s.Source].Name
		cs.Secrets = append(cs.Secrets, &dockerswarm.SecretReference{SecretID: secretIDs[name], SecretName: name,
			File: &dockerswarm.SecretReferenceFileTarget{Name: target, UID: "0", GID: "0", Mode: 0o444}})
	}
	for _, v := range svc.Volumes {
		m := mount.Mount{Type: mount.Type(v.Type), Source: v.Source, Target: v.Target}
		switch {
		case v.Type == "volume":
			m.Source = p.Volumes[v.Source].Name
		case v.Source == "/var/run/docker.sock":
			m.Source = c.SocketTemplate()
		case v.Source == "/var/lib/slipway-gateway":
			// The agent tells its node's engine to mount this path into
			// the gateway: it must be the same inside and out.
			dir := filepath.Join(gatewayDirs, "{{.Node.Hostname}}")
			m.Source, m.Target = dir, dir
			cs.Env = append(cs.Env, "SLIPWAY_GATEWAY_SOCKET_DIR="+dir)
		default:
			t.Fatalf("service %s mounts %s, which this test does not stand in for", svc.Name, v.Source)
		}
		cs.Mounts = append(cs.Mounts, m)
	}
	if svc.StopGracePeriod != nil {
		d := time.Duration(*svc.StopGracePeriod)
		cs.StopGracePeriod = &d
	}
	spec := dockerswarm.ServiceSpec{
		Annotations:  dockerswarm.Annotations{Name: stackName + "_" + svc.Name, Labels: map[string]string{"com.docker.stack.namespace": stackName}},
		TaskTemplate: dockerswarm.TaskSpec{ContainerSpec: cs},
		EndpointSpec: &dockerswarm.EndpointSpec{},
	}
	for key := range svc.Networks {
		spec.TaskTemplate.Networks = append(spec.TaskTemplate.Networks, dockerswarm.NetworkAttachmentConfig{
			Target: p.Networks[key].Name, Aliases: []string{svc.Name}})
	}
	for _, port := range svc.Ports {
		published, err := strconv.Atoi(port.Published)
		if err != nil {
			t.Fatalf("service %s publishes %q", svc.Name, port.Published)
		}
		spec.EndpointSpec.Ports = append(spec.EndpointSpec.Ports, dockerswarm.PortConfig{Protocol: dockerswarm.PortConfigProtocolTCP,
			TargetPort: port.Target, PublishedPort: uint32(published), PublishMode: dockerswarm.PortConfigPublishMode(port.Mode)})
	}
	d := svc.Deploy
	if d == nil {
		t.Fatalf("service %s has no deploy section", svc.Name)
	}
	spec.EndpointSpec.Mode = dockerswarm.ResolutionMode(d.EndpointMode)
	if d.Mode == "global" {
		spec.Mode.Global = &dockerswarm.GlobalService{}
	} else {
		replicas := uint64(1)
		if d.Replicas != nil {
			replicas = uint64(*d.Replicas)
		}
		spec.Mode.Replicated = &dockerswarm.ReplicatedService{Replicas: &replicas}
	}
	spec.TaskTemplate.Placement = &dockerswarm.Placement{Constraints: d.Placement.Constraints}
	if d.RestartPolicy != nil {
		spec.TaskTemplate.RestartPolicy = &dockerswarm.RestartPolicy{Condition: dockerswarm.RestartPolicyCondition(d.RestartPolicy.Condition)}
	}
	return spec
}

// reportStack logs the stack's tasks and the end of each container's log,
// for a failed test.
func reportStack(t *testing.T, c *harness.Cluster) {
	ctx := context.Background()
	tasks, _ := c.Manager().TaskList(ctx, dockerswarm.TaskListOptions{})
	for _, task := range tasks {
		t.Logf("task %s on %s: %s (%s) %s", task.Annotations.Name+task.ServiceID[:6], c.NodeByID(task.NodeID).Hostname, task.Status.State, task.Status.Message, task.Status.Err)
	}
	for _, n := range c.Nodes {
		list, _ := n.Client.ContainerList(ctx, container.ListOptions{All: true})
		for _, ctr := range list {
			rc, err := n.Client.ContainerLogs(ctx, ctr.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "15"})
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			t.Logf("node %d, %s (%s):\n%s", n.Index, ctr.Names, ctr.State, b)
		}
	}
}

// setupToken reads the setup token serve logged on its first start, from
// the logs of the service's task ("" until it did).
func setupToken(t *testing.T, c *harness.Cluster, service string) string {
	t.Helper()
	ctx := context.Background()
	for _, n := range c.Nodes {
		list, err := n.Client.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", "com.docker.swarm.service.name="+service))})
		if err != nil {
			t.Fatal(err)
		}
		for _, ctr := range list {
			rc, err := n.Client.ContainerLogs(ctx, ctr.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if m := regexp.MustCompile(`setup_token=(slws_[A-Za-z0-9_-]+)`).FindSubmatch(b); m != nil {
				return string(m[1])
			}
		}
	}
	return ""
}

// firstOwner signs up the first owner on the first-run form with the setup
// token, logs in and creates an API token with every scope on the
// dashboard, as a newcomer would, and returns the token.
func firstOwner(t *testing.T, base, setup string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	cl := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	u, _ := url.Parse(base)
	csrfRE := regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)
	// post submits form to path as the page's form would: with the CSRF
	// token the page carries (a session's), else the CSRF cookie's.
	post := func(page, path string, form url.Values) (int, string) {
		t.Helper()
		res, err := cl.Get(base + page)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, ck := range jar.Cookies(u) {
			if ck.Name == "slipway_csrf" {
				form.Set("_csrf", ck.Value)
			}
		}
		if m := csrfRE.FindSubmatch(b); m != nil {
			form.Set("_csrf", string(m[1]))
		}
		res, err = cl.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ = io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	const email, password = "owner@example.com", "correct horse battery"
	if status, body := post("/login", "/setup", url.Values{"email": {email}, "password": {password}, "team": {"Acme"}, "token": {setup}}); status != http.StatusSeeOther {
		t.Fatalf("/setup: %d %.300s", status, body)
	}
	// Signed up, the owner may be logged in already.
	if res, err := cl.Get(base + "/tokens"); err != nil {
		t.Fatal(err)
	} else if res.Body.Close(); res.StatusCode != http.StatusOK {
		if status, body := post("/login", "/login", url.Values{"email": {email}, "password": {password}}); status != http.StatusSeeOther {
			t.Fatalf("/login: %d %.300s", status, body)
		}
	}
	form := url.Values{"name": {"stack"}}
	for _, s := range auth.AllScopes {
		form.Add("scopes", string(s))
	}
	status, body := post("/tokens", "/tokens", form)
	m := regexp.MustCompile(`slw_[A-Za-z0-9_-]{20,}`).FindString(body)
	if status != http.StatusCreated || m == "" {
		t.Fatalf("/tokens: %d, no token in %.300s", status, body)
	}
	return m
}

// readmeExample is the README's first manifest (notes.toml).
func readmeExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(swarmtest.ImagesDir(), "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```toml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md has no TOML example")
	}
	return string(m[1])
}

// randomHex is n random bytes in hex, as `openssl rand -hex n` prints.
func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
