package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// TestDeploy_EndToEnd runs `slipway dev` and deploys a scratch image to the
// real Swarm with `slipway app apply --deploy --wait`, then reads it back
// with `slipway app status`.
func TestDeploy_EndToEnd(t *testing.T) {
	t.Parallel()
	bin := slipwayBinary(t)
	image := swarmtest.Image(t, "web")
	dir, err := os.MkdirTemp("", "slipway-deploy-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // the private Postgres runs as postgres
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	dev := exec.Command(bin, "dev", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--bootstrap-token-file", tokenFile)
	dev.Env = append(withoutEnv(os.Environ(), "DATABASE_URL"), "SLIPWAY_IMAGES_PULL=false", "SLIPWAY_GATEWAY=off", "SLIPWAY_METRICS_TOKEN="+e2eMetricsToken)
	logFile, err := os.Create(filepath.Join(dir, "dev.log"))
	if err != nil {
		t.Fatal(err)
	}
	dev.Stderr = logFile
	stdout, err := dev.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- dev.Wait()
	}()
	// stopDev stops dev (and its worker) before the Swarm objects are
	// removed, so no reconciliation repairs them meanwhile.
	var stopOnce sync.Once
	stopDev := func() {
		stopOnce.Do(func() {
			_ = dev.Process.Signal(syscall.SIGINT)
			select {
			case <-exited:
			case <-time.After(60 * time.Second):
				_ = dev.Process.Kill()
				<-exited
			}
		})
	}
	t.Cleanup(func() {
		stopDev()
		if t.Failed() {
			log, _ := os.ReadFile(logFile.Name())
			t.Logf("slipway dev log:\n%s", log)
		}
	})

	urlRE := regexp.MustCompile(`running at (http://\S+)`)
	var base string
	deadline := time.After(90 * time.Second)
	for base == "" || !fileExists(tokenFile) {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("slipway dev exited early")
			}
			if m := urlRE.FindStringSubmatch(l); m != nil {
				base = m[1]
			}
		case <-deadline:
			t.Fatal("slipway dev did not start in 90s")
		}
	}
	go func() {
		for range lines { // keep dev's stdout drained
		}
	}()
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	cliEnv := append(withoutEnv(withoutEnv(os.Environ(), "SLIPWAY_URL"), "SLIPWAY_TOKEN"),
		"SLIPWAY_URL="+base, "SLIPWAY_TOKEN="+strings.TrimSpace(string(token)))
	cli := func(args ...string) (string, error) {
		c := exec.Command(bin, args...)
		c.Env = cliEnv
		out, err := c.CombinedOutput()
		t.Logf("slipway %s:\n%s", strings.Join(args, " "), out)
		return string(out), err
	}

	name := "e2e-" + swarmtest.ID()
	manifestFile := filepath.Join(dir, "slipway.toml")
	doc := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
replicas = 2
[spec.services.environment]
VERSION = "one"
[spec.services.source]
type = "image"
image = %q
[spec.services.healthcheck]
type = "http"
port = 8080
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
`, name, image)
	if err := os.WriteFile(manifestFile, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}

	out, applyErr := cli("app", "apply", "--file", manifestFile, "--deploy", "--wait", "--timeout", "4m")
	// Whatever the outcome, remove what the deployment created, by the
	// environment's labels, once dev is stopped.
	var status api.ApplicationStatus
	statusOut, err := statusJSON(bin, cliEnv, name)
	if err != nil {
		t.Fatalf("app status: %v", err)
	}
	if err := json.Unmarshal([]byte(statusOut), &status); err != nil || len(status.Environments) != 1 {
		t.Fatalf("app status --format json: %v\n%s", err, statusOut)
	}
	env := status.Environments[0]
	docker := swarmtest.Client(t)
	t.Cleanup(func() {
		stopDev()
		swarmtest.RemoveAndCheck(t, docker, swarm.LabelEnv+"="+env.ID)
	})
	if applyErr != nil {
		t.Fatalf("slipway app apply --deploy --wait: %v", applyErr)
	}
	for _, want := range []string{"created, revision 1", "created environments: production", "succeeded rollout:web", "succeeded in"} {
		if !strings.Contains(out, want) {
			t.Fatalf("apply output lacks %q", want)
		}
	}
	if env.Error != "" || len(env.Services) != 1 {
		t.Fatalf("status of %s: %+v", env.Name, env)
	}
	s := env.Services[0]
	// A local image runs pinned by its ID, so moving its tag later cannot
	// change what the deployment runs.
	info, err := swarmtest.Client(t).ImageInspect(context.Background(), image)
	if err != nil {
		t.Fatal(err)
	}
	if s.Service != "web" || s.Desired != 2 || s.Running != 2 || s.Health != "healthy" || s.Image != info.ID {
		t.Fatalf("web runs as %+v", s)
	}
	if env.LatestDeployment == nil || env.LatestDeployment.State != "succeeded" {
		t.Fatalf("latest deployment %+v", env.LatestDeployment)
	}
	text, err := cli("app", "status", name)
	if err != nil || !strings.Contains(text, "2/2") || !strings.Contains(text, "healthy") {
		t.Fatalf("app status text: %v", err)
	}
	// The service's output through the API: each line labelled with its
	// time and task, both replicas merged.
	logs, err := cli("env", "logs", name, "production", "web", "--tail", "20")
	lineRE := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z web\.([12]) listening on 8080$`)
	if m := lineRE.FindAllStringSubmatch(logs, -1); err != nil || len(m) != 2 || m[0][1] == m[1][1] {
		t.Fatalf("env logs: %v, want web.1's and web.2's startup line:\n%s", err, logs)
	}
	// --follow prints the tail, then keeps the stream open until stopped.
	follow := exec.Command(bin, "env", "logs", name, "production", "web", "--follow", "--tail", "1", "--since", "1h")
	follow.Env = cliEnv
	followOut, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	first, err := bufio.NewReader(followOut).ReadString('\n')
	followExited := make(chan error, 1)
	go func() { followExited <- follow.Wait() }()
	select {
	case err := <-followExited:
		t.Fatalf("env logs --follow ended by itself (%v) after %q", err, first)
	case <-time.After(500 * time.Millisecond): // it keeps following
	}
	_ = follow.Process.Kill()
	<-followExited
	if err != nil || !lineRE.MatchString(strings.TrimSuffix(first, "\n")) {
		t.Fatalf("env logs --follow: first line %q (%v)", first, err)
	}
	// deploying again through env deploy also waits to success.
	if out, err := cli("env", "deploy", name, "production", "--wait", "--timeout", "4m"); err != nil || !strings.Contains(out, "succeeded") {
		t.Fatalf("env deploy --wait: %v", err)
	}
	// dev's /metrics, behind its token, counts both deployments (the
	// worker's half) and the deploy job attempts.
	if code, _ := scrapeMetrics(t, base, ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token: %d, want 401", code)
	}
	code, scraped := scrapeMetrics(t, base, e2eMetricsToken)
	for _, want := range []string{`slipway_deployments_total{outcome="succeeded"} 2`, `slipway_job_duration_seconds_count{kind="deploy",`, `slipway_river_jobs`} {
		if code != http.StatusOK || !strings.Contains(scraped, want) {
			t.Fatalf("/metrics: %d, lacks %q:\n%s", code, want, scraped)
		}
	}
}

const e2eMetricsToken = "e2e-metrics-token-0123456789"

// scrapeMetrics GETs base/metrics with token (none when empty).
func scrapeMetrics(t *testing.T, base, token string) (int, string) {
	t.Helper()
	return getWithBearer(t, base+"/metrics", token)
}

// getWithBearer GETs url with "Authorization: Bearer token" (no header
// when token is empty) and returns the status and body.
func getWithBearer(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// statusJSON runs `slipway app status NAME --format json` and returns its stdout.
func statusJSON(bin string, env []string, name string) (string, error) {
	c := exec.Command(bin, "app", "status", name, "--format", "json")
	c.Env = env
	out, err := c.Output()
	return string(out), err
}
