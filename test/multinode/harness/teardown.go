package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// nodeDir matches a node's directory (node<i>) and netns (<prefix>-n<i>).
var (
	nodeDir   = regexp.MustCompile(`^node([1-9])$`)
	nodeNetns = regexp.MustCompile(`^` + namePrefix + `([0-9a-f]{4})-n([1-9])$`)
	anyNetns  = regexp.MustCompile(`^` + namePrefix + `([0-9a-f]{4})-`)
)

// clusterNodes lists the node numbers of cluster id known from its
// directories or namespaces.
func clusterNodes(id string) []int {
	seen := map[int]bool{}
	for _, root := range []string{filepath.Join(runRoot, id), filepath.Join(dataRoot, id)} {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if m := nodeDir.FindStringSubmatch(e.Name()); m != nil {
				n, _ := strconv.Atoi(m[1])
				seen[n] = true
			}
		}
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if m := nodeNetns.FindStringSubmatch(e.Name()); m != nil && m[1] == id {
			n, _ := strconv.Atoi(m[2])
			seen[n] = true
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// teardown removes cluster id using only what is on disk and in
// /run/netns, so it works as well for a cluster whose test binary died.
// The order follows ../shared/MULTINODE.md: containers, daemons, what is
// left in the namespaces and cgroups, cgroups, namespaces, mounts, files.
func teardown(id string) error {
	prefix := namePrefix + id
	run, data := filepath.Join(runRoot, id), filepath.Join(dataRoot, id)
	nodes := clusterNodes(id)
	netns := func(i int) string { return fmt.Sprintf("%s-n%d", prefix, i) }
	sw := prefix + "-sw"

	// 1. The containers, so each dockerd stops at once.
	for _, i := range nodes {
		killAll(syscall.SIGKILL, cgroupPIDs(netns(i)))
	}
	// 2. The dockerds (each stops its containerd).
	var daemons []int
	for _, i := range nodes {
		for _, f := range []string{"dockerd.pid.launcher", "dockerd.pid"} {
			pid := readPID(filepath.Join(run, fmt.Sprintf("node%d", i), f))
			if pid > 0 && inNetns(pid, netns(i)) && strings.Contains(cmdline(pid), "dockerd") && !slices.Contains(daemons, pid) {
				_ = syscall.Kill(pid, syscall.SIGTERM)
				daemons = append(daemons, pid)
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range daemons {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
	}
	// 3. Whatever is still in the namespaces or cgroups: containerd,
	// shims, docker-proxy, a daemon that did not stop.
	for range 20 {
		var left []int
		for _, i := range nodes {
			left = append(left, netnsPIDs(netns(i))...)
			left = append(left, cgroupPIDs(netns(i))...)
		}
		left = append(left, netnsPIDs(sw)...)
		if len(left) == 0 {
			break
		}
		killAll(syscall.SIGKILL, left)
		time.Sleep(250 * time.Millisecond)
	}
	// 4. Cgroups, then namespaces (the veths and the bridge go with them).
	var errs []error
	inodes := map[uint64]string{}
	for _, name := range append([]string{sw}, mapNames(nodes, netns)...) {
		if ino, ok := netnsInode(filepath.Join("/run/netns", name)); ok {
			inodes[ino] = name
		}
	}
	for _, i := range nodes {
		for _, dir := range cgroupDirs(netns(i)) {
			if err := removeCgroup(dir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for name := range maps(inodes) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := ip(ctx, "netns", "del", name); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	// The host link goes with the switch namespace; one left when that
	// namespace was gone already (a half-made cluster) is deleted here.
	for _, l := range hostLinks(prefix) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_ = ip(ctx, "link", "del", l)
		cancel()
	}
	// 5. Mounts under our directories in this namespace (none expected:
	// the nodes mount in their own).
	if mounts, err := mountPoints("/proc/self/mountinfo"); err == nil {
		for _, m := range underAny(mounts, []string{run, data}) {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
	}
	// 6. Files.
	for _, d := range []string{run, data} {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range []string{runRoot, dataRoot} {
		_ = os.Remove(d) // only when empty: another cluster may be running
	}
	for _, p := range procs() {
		if name, ok := inodes[procNetns(p)]; ok {
			errs = append(errs, fmt.Errorf("process %d (%s) is still in the deleted namespace %s", p, cmdline(p), name))
		}
	}
	return errors.Join(errs...)
}

func mapNames(nodes []int, f func(int) string) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = f(n)
	}
	return out
}

// maps returns the set of values of m.
func maps(m map[uint64]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for _, v := range m {
		out[v] = true
	}
	return out
}

// ReapStale removes the clusters whose test binary is gone (a panic or a
// timeout ended it before it could tear down).
func ReapStale() {
	for id := range clusterIDs() {
		b, _ := os.ReadFile(filepath.Join(runRoot, id, "owner"))
		if ownerAlive(string(b)) {
			continue
		}
		if err := teardown(id); err != nil {
			fmt.Fprintf(os.Stderr, "multinode: removing stale cluster %s: %v\n", id, err)
		}
	}
}

// clusterIDs lists every cluster that has a directory or a namespace.
func clusterIDs() map[string]bool {
	ids := map[string]bool{}
	for _, root := range []string{runRoot, dataRoot} {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			ids[e.Name()] = true
		}
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if m := anyNetns.FindStringSubmatch(e.Name()); m != nil {
			ids[m[1]] = true
		}
	}
	return ids
}

// ownerStamp identifies a process beyond its pid (which the kernel
// reuses): pid and start time.
func ownerStamp(pid int) string { return fmt.Sprintf("%d %s", pid, startTime(pid)) }

func ownerAlive(stamp string) bool {
	f := strings.Fields(stamp)
	if len(f) != 2 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	return err == nil && alive(pid) && startTime(pid) == f[1]
}

// startTime is field 22 of /proc/<pid>/stat, or "".
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	// The command (field 2) may hold spaces; fields count from its ')'.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// alive: the process exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// procs lists the pids in /proc.
func procs() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

func netnsInode(path string) (uint64, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, false
	}
	return st.Ino, true
}

func procNetns(pid int) uint64 {
	ino, _ := netnsInode(fmt.Sprintf("/proc/%d/ns/net", pid))
	return ino
}

// inNetns: pid lives in the named network namespace.
func inNetns(pid int, name string) bool {
	want, ok := netnsInode(filepath.Join("/run/netns", name))
	return ok && procNetns(pid) == want
}

// netnsPIDs lists the processes in the named network namespace.
func netnsPIDs(name string) []int {
	want, ok := netnsInode(filepath.Join("/run/netns", name))
	if !ok {
		return nil
	}
	var out []int
	for _, p := range procs() {
		if procNetns(p) == want {
			out = append(out, p)
		}
	}
	return out
}

// cgroupDirs are the directories of cgroup name in every hierarchy
// (cgroup v1 has one per controller; v2 one in all).
func cgroupDirs(name string) []string {
	var out []string
	if fi, err := os.Stat(filepath.Join("/sys/fs/cgroup", name)); err == nil && fi.IsDir() {
		out = append(out, filepath.Join("/sys/fs/cgroup", name))
	}
	hierarchies, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range hierarchies {
		d := filepath.Join("/sys/fs/cgroup", h.Name(), name)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// cgroupPIDs lists the processes in cgroup name and its children.
func cgroupPIDs(name string) []int {
	seen := map[int]bool{}
	for _, dir := range cgroupDirs(name) {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(path)
			for f := range strings.FieldsSeq(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	out := make([]int, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	return out
}

// removeCgroup removes a cgroup directory and its children, deepest first.
func removeCgroup(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	var last error
	for _, d := range dirs {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
			last = fmt.Errorf("remove cgroup %s: %w", d, err)
		}
	}
	return last
}

// killAll signals each pid; a containerd shim's children first, so no
// container process is left to be re-parented.
func killAll(sig syscall.Signal, pids []int) {
	for _, p := range pids {
		if strings.Contains(cmdline(p), "containerd-shim") {
			for _, c := range children(p) {
				_ = syscall.Kill(c, sig)
			}
		}
		_ = syscall.Kill(p, sig)
	}
}

func children(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for f := range strings.FieldsSeq(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}
