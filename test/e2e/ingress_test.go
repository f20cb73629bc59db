package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
)

// TestIngress_DevDeploysAndRoutesThroughGateway runs `slipway dev` with a
// gateway container of its own, applies and deploys a manifest with a
// public route through the API, and fetches the route through the gateway.
func TestIngress_DevDeploysAndRoutesThroughGateway(t *testing.T) {
	t.Parallel()
	bin := slipwayBinary(t)
	cli := swarmtest.Client(t)
	image := swarmtest.Image(t, "web")
	id := swarmtest.ID()
	gatewayName := "slipway-gw-e2e-" + id
	envs := devCleanup(t, cli, gatewayName)

	dir, err := os.MkdirTemp("", "slipway-ingress-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// The private cluster runs as the postgres user when we are root.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	gwPort := freePort(t)

	cmd := exec.Command(bin, "dev", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--bootstrap-token-file", tokenFile)
	cmd.Env = append(withoutEnv(os.Environ(), "DATABASE_URL"),
		"SLIPWAY_IMAGES_PULL=false",
		"SLIPWAY_GATEWAY_NAME="+gatewayName,
		"SLIPWAY_GATEWAY_HTTP_PORT="+strconv.Itoa(gwPort),
		"SLIPWAY_GATEWAY_HTTPS_PORT=0",
	)
	base := startDev(t, cmd, tokenFile)
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))

	host := "app-" + id + ".test"
	doc := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "gw-%s"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"

[[spec.routes]]
hostname = %q
service = "web"
port = 8080
visibility = "public"
`, id, image, host)

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
	envs.Add(dep.EnvironmentID)

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
			break
		}
		if d.Terminal {
			t.Fatalf("deployment ended %s: %s %s", d.State, d.ErrorCode, d.ErrorMessage)
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment still %s after 4 minutes", d.State)
		}
		time.Sleep(time.Second)
	}

	// The gateway polls serve for the table and resolves the service's
	// tasks on the overlay: give both a moment.
	gw := fmt.Sprintf("http://127.0.0.1:%d/", gwPort)
	var last string
	deadline = time.Now().Add(60 * time.Second)
	for {
		status, body, err := get(gw, host)
		if err == nil && status == http.StatusOK && strings.TrimSpace(body) == "ok" {
			break
		}
		last = fmt.Sprintf("status %d body %q err %v", status, body, err)
		if time.Now().After(deadline) {
			t.Fatalf("GET %s Host %s through the gateway never answered 200 ok: last %s", gw, host, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The API and the CLI show the live route.
	var listed struct {
		Routes []struct {
			Hostname, Visibility, URL, Service string
			Port                               int
		} `json:"routes"`
	}
	app := "gw-" + id
	api(t, "GET", base+"/api/v1/applications/"+app+"/environments/production/routes", token, "", "", &listed)
	if len(listed.Routes) != 1 || listed.Routes[0].Hostname != host || listed.Routes[0].Visibility != "public" ||
		listed.Routes[0].URL != "http://"+host+"/" || listed.Routes[0].Service != "web" || listed.Routes[0].Port != 8080 {
		t.Fatalf("GET routes = %+v", listed.Routes)
	}
	routesCmd := exec.Command(bin, "env", "routes", app, "production")
	routesCmd.Env = append(os.Environ(), "SLIPWAY_URL="+base, "SLIPWAY_TOKEN="+token)
	if out, err := routesCmd.CombinedOutput(); err != nil || !strings.Contains(string(out), host) || !strings.Contains(string(out), "web:8080") {
		t.Fatalf("slipway env routes: %v\n%s", err, out)
	}

	// A host nobody routes is the gateway's 404, not the service.
	if status, _, err := get(gw, "nobody-"+id+".test"); err != nil || status != http.StatusNotFound {
		t.Fatalf("unknown host: status %d, err %v; want 404", status, err)
	}
}

func get(url, host string) (int, string, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// api calls the JSON API and decodes a 2xx answer into out.
func api(t *testing.T, method, url, token, contentType, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %s: decode %s: %v", method, url, b, err)
	}
}

// startDev starts cmd (`slipway dev`), waits for its URL and the token
// file, and stops it with SIGTERM when the test ends.
func startDev(t *testing.T, cmd *exec.Cmd, tokenFile string) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(t.TempDir(), "dev.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("slipway dev log:\n%s", b)
			}
		}
	})
	urlRE := regexp.MustCompile(`running at (http://\S+)`)
	var base string
	gateway := false
	deadline := time.After(3 * time.Minute)
	for base == "" || !gateway {
		select {
		case l, ok := <-lines:
			if !ok {
				b, _ := os.ReadFile(logFile.Name())
				t.Fatalf("slipway dev exited early; log:\n%s", b)
			}
			t.Log(l)
			if m := urlRE.FindStringSubmatch(l); m != nil {
				base = m[1]
			}
			gateway = gateway || strings.HasPrefix(l, "Gateway listening on")
		case <-deadline:
			b, _ := os.ReadFile(logFile.Name())
			t.Fatalf("slipway dev did not start its gateway in 3 minutes; log:\n%s", b)
		}
	}
	go func() {
		for range lines {
		}
	}()
	if _, err := os.Stat(tokenFile); err != nil {
		t.Fatal(err)
	}
	return base
}

// slipwayBinary returns SLIPWAY_BIN (make test sets it) or a static build:
// the gateway image is made from this very binary.
func slipwayBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SLIPWAY_BIN"); bin != "" {
		return bin
	}
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(t.TempDir(), "slipway")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/slipway")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build slipway: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// devCleanup registers, before `slipway dev` starts, the removal of its
// gateway gatewayName and of the environments added to the result, each
// failing the test if anything of it is left. Cleanups run last-registered
// first: dev stops first (its drift repair would bring removed services
// back), then the gateway goes (it holds the environments' ingress
// overlays), then the environments.
func devCleanup(t *testing.T, cli *client.Client, gatewayName string) *chaostest.EnvironmentCleanup {
	envs := chaostest.Environments(t)
	t.Cleanup(func() { chaostest.RemoveGateway(t, cli, gatewayName) })
	return envs
}
