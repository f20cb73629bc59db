package summary

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// faultLine is the summary's one line for the fault scenarios.
var faultLine = regexp.MustCompile(`^faults: (\d+) scenarios? survived(?: \((.*)\))?$`)

var faultMu sync.Mutex

// Fault records that a fault scenario was survived: it logs detail in the
// test and counts the scenario, by its short name, into the summary's
// single line `faults: K scenarios survived (name; name; ...)`. Test
// binaries of several packages add to it, so the file is locked while
// the line is rewritten.
func Fault(t testing.TB, name, detailFormat string, args ...any) {
	t.Helper()
	t.Logf("fault scenario survived: %s: %s", name, fmt.Sprintf(detailFormat, args...))
	path := os.Getenv(EnvFile)
	if path == "" {
		return
	}
	faultMu.Lock()
	defer faultMu.Unlock()
	if err := addFault(path, name); err != nil {
		t.Logf("summary file %s: %v", path, err)
	}
}

func addFault(path, name string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var lines []string
	var names []string
	at := -1
	for _, l := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		if l == "" {
			continue
		}
		if m := faultLine.FindStringSubmatch(l); m != nil && at < 0 {
			if m[2] != "" {
				names = strings.Split(m[2], "; ")
			}
			at = len(lines)
		}
		lines = append(lines, l)
	}
	names = append(names, name)
	line := fmt.Sprintf("faults: %s survived (%s)", plural(len(names)), strings.Join(names, "; "))
	if at < 0 {
		lines = append(lines, line)
	} else {
		lines[at] = line
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt([]byte(strings.Join(lines, "\n")+"\n"), 0)
	return err
}

func plural(n int) string {
	if n == 1 {
		return "1 scenario"
	}
	return strconv.Itoa(n) + " scenarios"
}
