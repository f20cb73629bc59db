package static

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/test/summary"
)

// execAllowed lists the only non-test files that may import os/exec, and
// why. Everything else talks to Docker through the Engine API and to git
// through go-git, so no user-controlled string can reach a shell.
var execAllowed = map[string]string{
	"store/localpg/localpg.go":             "starts the private Postgres of `slipway dev` (initdb, postgres) with argument lists",
	"runtime/swarm/swarmtest/swarmtest.go": "test helper: builds test images with the go toolchain",
	"bench/gateway/main.go":                "benchmark: runs wrk and nginx",
	"test/proxyrig/process.go":             "test helper (test/desync, bench/gateway): starts the gateway binary and nginx with argument lists",
	"test/proxyrig/gateway.go":             "test helper (test/desync, bench/gateway): builds the gateway binary with the go toolchain",
	"test/chaos/chaostest/chaostest.go":    "test helper: runs the slipway binary under test (serve, worker) with argument lists, and builds it with the go toolchain",
	// A test file (allowed anyway), listed for its unusual reach.
	"test/chaos/dockerd/dockerd_test.go":    "fault test: restarts dockerd with the command line it was started with (or systemctl restart docker), only with SLIPWAY_CHAOS_DOCKERD=1",
	"backup/backup.go":                      "slipway admin backup/restore: runs pg_dump and pg_restore with argument lists, the password in PGPASSWORD",
	"test/multinode/harness/exec.go":        "test helper: makes network namespaces and links with ip, and starts each node's dockerd through nsenter and unshare, with argument lists",
	"backupctl/backuptest/backuptest.go":    "test helper: builds the archiver and Postgres test images with the go toolchain, and finds the libraries of the host's PostgreSQL binaries with ldd, with argument lists",
	"backupctl/backuptest/pgserver/main.go": "test image entrypoint: starts initdb and postgres inside the FROM scratch Postgres test image, with argument lists",
	"backupstore/s3test/s3test.go":          "test helper: builds and runs versitygw, the real S3 server the S3 target is tested against, with argument lists",
}

// execAllowedInTests are test files' reasons: git http-backend serving test
// repositories, the go toolchain building test binaries, the slipway binary
// under test, and the C compiler for the probe.
var execAllowedInTests = []string{"_test.go"}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// TestNoShellOutsideAllowList parses every Go file of the module and fails
// when one imports os/exec (or syscall.Exec through a wrapper package) and
// is not on the allow-list.
func TestNoShellOutsideAllowList(t *testing.T) {
	root := moduleRoot(t)
	var offenders []string
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if name == ".git" || name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != "os/exec" {
				continue
			}
			if _, ok := execAllowed[rel]; ok {
				continue
			}
			if strings.HasSuffix(rel, execAllowedInTests[0]) {
				continue
			}
			offenders = append(offenders, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d Go files checked: the walk is broken", checked)
	}
	for rel := range execAllowed {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("allow-list names %s, which is gone: remove the entry", rel)
		}
	}
	sort.Strings(offenders)
	if len(offenders) > 0 {
		t.Fatalf("os/exec imported outside the allow-list (use the Docker Engine API or go-git instead, or add the file with a reason):\n%s", strings.Join(offenders, "\n"))
	}
	summary.Line(t, "no shell: %d Go files checked, os/exec only in %d allow-listed files and tests", checked, len(execAllowed))
}
