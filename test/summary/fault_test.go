package summary

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFault_CountsIntoOneLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.txt")
	t.Setenv(EnvFile, path)
	Line(t, "tenancy: 3 routes × 2 objects, 0 leaks")
	Fault(t, "worker killed", "detail %d", 1)
	Line(t, "secrets: 0 hits in 4 scanned outputs")
	Fault(t, "serve killed", "detail")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "tenancy: 3 routes × 2 objects, 0 leaks\n" +
		"faults: 2 scenarios survived (worker killed; serve killed)\n" +
		"secrets: 0 hits in 4 scanned outputs\n"
	if string(b) != want {
		t.Fatalf("summary file:\n%s\nwant:\n%s", b, want)
	}
}
