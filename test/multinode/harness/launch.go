package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// envLaunch, when set, makes this binary the node launcher instead of
// whatever it normally is (a test binary): it runs between unshare and
// dockerd, inside the node's fresh mount and UTS namespaces, and execs
// dockerd. Its value is a JSON launchSpec.
const envLaunch = "SLIPWAY_MULTINODE_LAUNCH"

// launchSpec is what the launcher needs to prepare the namespace.
type launchSpec struct {
	Hostname string
	// RunDir is the node's run directory (a scratch mount point goes there).
	RunDir string
	// Dockerd is dockerd's argument vector, Dockerd[0] an absolute path.
	Dockerd []string
	Env     []string
}

// init turns the process into the launcher when envLaunch is set. It must
// run before the testing package parses flags or starts anything.
func init() {
	raw := os.Getenv(envLaunch)
	if raw == "" {
		return
	}
	if err := launch(raw); err != nil {
		fmt.Fprintf(os.Stderr, "multinode launcher: %v\n", err)
		os.Exit(3)
	}
}

// hostMountRoots are the host directories whose mounts a node's mount
// namespace must not keep a copy of: a copy would keep the host daemon's
// container filesystems, its network namespaces, or another cluster's, alive
// after their owner unmounted them.
var hostMountRoots = []string{"/var/lib/docker", "/run/docker", "/var/run/docker", "/run/containerd", "/run/netns", runRoot, dataRoot}

// launch prepares the mount namespace (unshare gave us a private copy of
// the host's) and execs dockerd; it returns only on failure.
func launch(raw string) error {
	var spec launchSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return fmt.Errorf("%s: %w", envLaunch, err)
	}
	if len(spec.Dockerd) == 0 {
		return fmt.Errorf("%s: no dockerd command", envLaunch)
	}
	if err := syscall.Sethostname([]byte(spec.Hostname)); err != nil {
		return fmt.Errorf("sethostname: %w", err)
	}
	mounts, err := mountPoints("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	for _, m := range underAny(mounts, hostMountRoots) {
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
	// Hide the host's /run/docker (plugin sockets) and /run/containerd:
	// dockerd would use a system containerd socket found there, whose
	// shims then vanish with this namespace.
	for _, d := range []string{"/run/docker", "/run/containerd"} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			if err := syscall.Mount("slipway-mn-"+filepath.Base(d), d, "tmpfs", 0, "mode=711"); err != nil {
				return fmt.Errorf("mount tmpfs on %s: %w", d, err)
			}
		}
	}
	// A sysfs of this network namespace (/sys/class/net), keeping the
	// host's cgroup mounts: `ip netns exec` would drop those and break
	// dockerd's cgroups.
	move := filepath.Join(spec.RunDir, "cgroup-move")
	if err := os.MkdirAll(move, 0o700); err != nil {
		return err
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"bind /sys/fs/cgroup", func() error { return syscall.Mount("/sys/fs/cgroup", move, "", syscall.MS_BIND|syscall.MS_REC, "") }},
		{"unmount /sys", func() error { return syscall.Unmount("/sys", syscall.MNT_DETACH) }},
		{"mount sysfs", func() error { return syscall.Mount("sysfs", "/sys", "sysfs", 0, "") }},
		{"move cgroups back", func() error { return syscall.Mount(move, "/sys/fs/cgroup", "", syscall.MS_MOVE, "") }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	_ = os.Remove(move)
	return syscall.Exec(spec.Dockerd[0], spec.Dockerd, spec.Env)
}

// mountPoints reads the mount points of a mountinfo file.
func mountPoints(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 {
			out = append(out, unescapeMountinfo(f[4]))
		}
	}
	return out, nil
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// underAny keeps the mount points at or below one of roots, deepest first
// (so each unmounts before its parent).
func underAny(mounts, roots []string) []string {
	var out []string
	for _, m := range mounts {
		for _, r := range roots {
			if m == r || strings.HasPrefix(m, r+"/") {
				out = append(out, m)
				break
			}
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}
