package dockerd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	apiclient "github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// EnvGate must be "1" for the test to run.
const EnvGate = "SLIPWAY_CHAOS_DOCKERD"

const (
	pidFile = "/var/run/docker.pid"
	// logFile is where scripts/prereqs.sh sends dockerd's output.
	logFile  = "/var/log/slipway-dockerd.log"
	replicas = 2
)

// TestDockerdRestarted deploys an application with serve and worker
// running, restarts dockerd the way it was started, and checks that the
// service comes back with every replica running; then it scales the
// service to zero behind Slipway's back and checks that drift repair
// (triggered by the worker's reconnected event stream or its periodic
// scan) restores the target.
func TestDockerdRestarted(t *testing.T) {
	if os.Getenv(EnvGate) != "1" {
		t.Skipf("restarts dockerd, disrupting every other Docker user: set %s=1 (make test runs it last, alone)", EnvGate)
	}
	if os.Geteuid() != 0 {
		t.Skip("restarting dockerd needs root")
	}
	ctx := context.Background()
	bin := chaostest.Binary(t)
	url, st := chaostest.Database(t)
	id := swarmtest.ID()
	team := chaostest.NewTeam(t, st, id)
	cli := swarmtest.Client(t)
	// Whatever happens, leave a running dockerd behind.
	t.Cleanup(func() { ensureDockerd(t, cli) })

	// Before the processes start, so it runs after they are killed.
	envs := chaostest.Environments(t)
	srv := chaostest.StartServe(t, bin, url)
	chaostest.StartWorker(t, bin, url, "worker")
	c := team.Client(t, srv)
	web := swarmtest.Image(t, "web")
	app := "dockerd-" + id
	res, err := c.Apply(ctx, fmt.Appendf(nil, `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
replicas = %d
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
`, app, replicas, web), apiclient.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	dep := res.Deployments[0]
	envs.Add(dep.EnvironmentID)
	if state, code, msg := chaostest.WaitDeployment(t, c, dep.ID, 4*time.Minute); state != string(store.StateSucceeded) {
		t.Fatalf("deploy: %s %s %s", state, code, msg)
	}
	service := webService(t, cli, dep.EnvironmentID)

	restartDockerd(t, cli)
	waitRunning(t, cli, service.ID, replicas, 3*time.Minute, "the service to come back after the restart")

	// Drift behind Slipway's back: the worker must notice and repair.
	s, _, err := cli.ServiceInspectWithRaw(ctx, service.ID, dockerswarm.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zero := uint64(0)
	s.Spec.Mode.Replicated.Replicas = &zero
	if _, err := cli.ServiceUpdate(ctx, s.ID, s.Version, s.Spec, dockerswarm.ServiceUpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The periodic scan (60 s) bounds the wait when no event arrives.
	waitRunning(t, cli, service.ID, replicas, 3*time.Minute, "drift repair to restore the replicas")
	summary.Fault(t, "dockerd restarted",
		"service %s came back with %d replicas; scaled to 0 by hand afterwards, drift repair restored it", service.Spec.Name, replicas)
}

// webService is the environment's web service.
func webService(t *testing.T, cli *client.Client, envID string) dockerswarm.Service {
	t.Helper()
	services, err := cli.ServiceList(context.Background(), dockerswarm.ServiceListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+envID))})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range services {
		if strings.HasSuffix(s.Spec.Name, "-web") {
			return s
		}
	}
	t.Fatalf("no web service among %d services of environment %s", len(services), envID)
	return dockerswarm.Service{}
}

// waitRunning waits until the service wants n replicas and n tasks run.
func waitRunning(t *testing.T, cli *client.Client, serviceID string, n int, timeout time.Duration, what string) {
	t.Helper()
	chaostest.WaitFor(t, timeout, what, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, _, err := cli.ServiceInspectWithRaw(ctx, serviceID, dockerswarm.ServiceInspectOptions{})
		if err != nil || s.Spec.Mode.Replicated == nil || s.Spec.Mode.Replicated.Replicas == nil || *s.Spec.Mode.Replicated.Replicas != uint64(n) {
			return false
		}
		tasks, err := cli.TaskList(ctx, dockerswarm.TaskListOptions{Filters: filters.NewArgs(
			filters.Arg("service", serviceID), filters.Arg("desired-state", "running"))})
		if err != nil {
			return false
		}
		running := 0
		for _, task := range tasks {
			if task.Status.State == dockerswarm.TaskStateRunning {
				running++
			}
		}
		return running == n
	})
}

// restartDockerd stops dockerd with SIGTERM and starts it again with the
// same command line, detached, as scripts/prereqs.sh does (nohup, output
// appended to its log); under systemd it asks systemctl instead.
func restartDockerd(t *testing.T, cli *client.Client) {
	t.Helper()
	pid := dockerdPID(t)
	if managedBySystemd(pid) {
		if out, err := exec.Command("systemctl", "restart", "docker").CombinedOutput(); err != nil {
			t.Fatalf("systemctl restart docker: %v\n%s", err, out)
		}
		waitDockerd(t, cli)
		return
	}
	args := commandLine(t, pid)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("stop dockerd (pid %d): %v", pid, err)
	}
	chaostest.WaitFor(t, 2*time.Minute, "dockerd to exit", func() bool {
		return syscall.Kill(pid, 0) != nil
	})
	startDockerd(t, args)
	waitDockerd(t, cli)
}

// ensureDockerd starts dockerd again if the test left it stopped.
func ensureDockerd(t *testing.T, cli *client.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err == nil {
		return
	}
	t.Log("dockerd is down after the test: starting it")
	startDockerd(t, []string{"dockerd"})
	waitDockerd(t, cli)
}

func startDockerd(t *testing.T, args []string) {
	t.Helper()
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own session: dockerd must outlive this test process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dockerd: %v", err)
	}
	if err := cmd.Process.Release(); err != nil {
		t.Fatal(err)
	}
}

// waitDockerd waits for the daemon and its Swarm to be back.
func waitDockerd(t *testing.T, cli *client.Client) {
	t.Helper()
	chaostest.WaitFor(t, 2*time.Minute, "dockerd and its Swarm to be back", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		info, err := cli.Info(ctx)
		return err == nil && info.Swarm.LocalNodeState == dockerswarm.LocalNodeStateActive && info.Swarm.ControlAvailable
	})
}

func dockerdPID(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("find dockerd: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("find dockerd: %s holds %q", pidFile, b)
	}
	return pid
}

// commandLine is the process's argv, from /proc.
func commandLine(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
		args = append(args, string(a))
	}
	if len(args) == 0 || !strings.HasSuffix(args[0], "dockerd") {
		t.Fatalf("pid %d is not dockerd: %q", pid, args)
	}
	return args
}

// managedBySystemd reports whether the process runs in docker.service's
// cgroup, where systemd would fight a hand restart.
func managedBySystemd(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("docker.service"))
}
