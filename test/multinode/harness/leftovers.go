package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Leftovers lists everything of any cluster that is still there: network
// namespaces, processes (by their arguments, or by living in one of our
// namespaces), cgroups, mounts and directories. Call it when no cluster
// should be running (after a whole test run); it changes nothing.
func Leftovers() []string { return leftovers("") }

// LeftoversOf is Leftovers of one cluster.
func LeftoversOf(id string) []string { return leftovers(id) }

// leftovers lists what is left of cluster id, or of every cluster when id
// is empty.
func leftovers(id string) []string {
	var out []string
	prefix, run, data := namePrefix+id, runRoot, dataRoot
	if id != "" {
		run, data = filepath.Join(runRoot, id), filepath.Join(dataRoot, id)
	}
	ours := map[uint64]string{}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if anyNetns.MatchString(e.Name()) && strings.HasPrefix(e.Name(), prefix) {
			out = append(out, "netns "+e.Name())
			if ino, ok := netnsInode(filepath.Join("/run/netns", e.Name())); ok {
				ours[ino] = e.Name()
			}
		}
	}
	for _, l := range hostLinks(prefix) {
		out = append(out, "host link "+l)
	}
	self := os.Getpid()
	for _, p := range procs() {
		if p == self {
			continue
		}
		args := cmdline(p)
		switch {
		case strings.Contains(args, run+"/") || strings.Contains(args, data+"/"):
			out = append(out, fmt.Sprintf("process %d: %.150s", p, args))
		case ours[procNetns(p)] != "":
			out = append(out, fmt.Sprintf("process %d in netns %s: %.150s", p, ours[procNetns(p)], args))
		}
	}
	for _, pattern := range []string{"/sys/fs/cgroup/" + prefix + "*", "/sys/fs/cgroup/*/" + prefix + "*"} {
		dirs, _ := filepath.Glob(pattern)
		for _, d := range dirs {
			out = append(out, "cgroup "+d)
		}
	}
	if mounts, err := mountPoints("/proc/self/mountinfo"); err == nil {
		for _, m := range mounts {
			if underAny([]string{m}, []string{run, data}) != nil || strings.HasPrefix(m, "/run/netns/"+prefix) {
				out = append(out, "mount "+m)
			}
		}
	}
	for _, root := range []string{runRoot, dataRoot} {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		if len(entries) == 0 && id == "" {
			out = append(out, "directory "+root+" (empty)")
		}
		for _, e := range entries {
			if id == "" || e.Name() == id {
				out = append(out, "directory "+filepath.Join(root, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// RemoveAll tears down every cluster, running or not. It is for the end
// of a test run, after Leftovers reported what was left.
func RemoveAll() error {
	var errs []string
	for id := range clusterIDs() {
		if err := teardown(id); err != nil {
			errs = append(errs, fmt.Sprintf("cluster %s: %v", id, err))
		}
	}
	for _, d := range []string{runRoot, dataRoot} {
		_ = os.Remove(d)
	}
	if len(errs) > 0 {
		return fmt.Errorf("multinode: %s", strings.Join(errs, "; "))
	}
	return nil
}
