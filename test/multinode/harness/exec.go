package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// This is the harness's only file that runs other programs, each with an
// argument vector: iproute2's ip, and nsenter + unshare to start a node.

// ip runs `ip args...`.
func ip(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// sysctlIn sets a sysctl inside a network namespace (net.* values are
// per namespace).
func sysctlIn(ctx context.Context, netns, kv string) error {
	return ip(ctx, "netns", "exec", netns, "sysctl", "-qw", kv)
}

// lookTools finds the programs a cluster needs.
func lookTools() error {
	for _, name := range []string{"ip", "nsenter", "unshare", "dockerd", "containerd", "runc"} {
		if _, err := exec.LookPath(name); err != nil {
			return fmt.Errorf("%s is not installed: %w", name, err)
		}
	}
	return nil
}

// dockerdPath is dockerd's absolute path.
func dockerdPath() (string, error) { return exec.LookPath("dockerd") }

// startLauncher starts the node launcher (this binary, see launch.go) in
// the node's network namespace and new mount and UTS namespaces, in a
// session of its own so signals sent to the test's process group miss it.
// nsenter and unshare exec without forking, and the launcher execs
// dockerd: the returned pid is dockerd's. done is closed once it exited
// (and was waited for).
func startLauncher(netnsPath string, spec launchSpec, logFile *os.File) (pid int, done <-chan struct{}, err error) {
	self, err := os.Executable()
	if err != nil {
		return 0, nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return 0, nil, err
	}
	cmd := exec.Command("nsenter", "--net="+netnsPath, "--",
		"unshare", "--mount", "--uts", "--propagation", "private", "--", self)
	cmd.Env = []string{envLaunch + "=" + string(raw), "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, nil, fmt.Errorf("start node launcher: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return cmd.Process.Pid, exited, nil
}
