// Package summary lets tests report one line per area (tenancy, hostile
// inputs, secrets, faults) that `make test` prints at the end: go test hides
// the output of passing packages, so the lines are appended to the file
// named by SLIPWAY_TEST_SUMMARY. It is test-only: product code must not
// import it.
package summary

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// EnvFile names the file lines are appended to.
const EnvFile = "SLIPWAY_TEST_SUMMARY"

// Line logs the line in the test and appends it to the summary file, if
// one is set.
func Line(t testing.TB, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	path := os.Getenv(EnvFile)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Logf("summary file %s: %v", path, err)
		return
	}
	defer f.Close()
	// Fault rewrites the file under this lock; an append must not land
	// in the middle of that.
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	fmt.Fprintln(f, line)
}
