package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/app/auth"
)

// slipwayBinary returns SLIPWAY_BIN (set by make test) or builds one.
func slipwayBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SLIPWAY_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "slipway")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestDev_EndToEnd starts `slipway dev` with its private Postgres in a temp
// dir, calls the API with the bootstrap token, stops it with SIGINT and
// checks that the Postgres it started is gone.
func TestDev_EndToEnd(t *testing.T) {
	t.Parallel()
	bin := slipwayBinary(t)
	dir, err := os.MkdirTemp("", "slipway-dev-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// The private cluster runs as the postgres user when we are root; it
	// must be able to reach the data directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")

	cmd := exec.Command(bin, "dev", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--bootstrap-token-file", tokenFile)
	cmd.Env = append(withoutEnv(os.Environ(), "DATABASE_URL"), "SLIPWAY_GATEWAY=off")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait only after stdout hit EOF (os/exec's rule for pipes). EOF also
	// means no child kept our stdout open.
	lines := make(chan string, 100)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})

	urlRE := regexp.MustCompile(`running at (http://\S+)`)
	var base string
	deadline := time.After(90 * time.Second)
	for base == "" || !fileExists(tokenFile) {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("slipway dev exited early; stderr:\n%s", stderr.String())
			}
			t.Log(l)
			if m := urlRE.FindStringSubmatch(l); m != nil {
				base = m[1]
			}
		case <-deadline:
			t.Fatalf("slipway dev did not start in 90s; stderr:\n%s", stderr.String())
		}
	}
	var rest []string
	drained := make(chan struct{})
	go func() {
		for l := range lines {
			rest = append(rest, l)
		}
		close(drained)
	}()

	pgPID := postmasterPID(t, filepath.Join(dir, "data", "pg"))
	if !alive(pgPID) {
		t.Fatalf("postgres pid %d from postmaster.pid is not running", pgPID)
	}

	if !fileExists(filepath.Join(dir, "data", "slipway.toml")) {
		t.Fatal("slipway dev did not seed <data-dir>/slipway.toml")
	}

	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(base, strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	me, err := c.Me(ctx)
	if err != nil {
		t.Fatalf("GET /api/v1/me: %v", err)
	}
	if me.User.Email != "dev@localhost" || me.Team.Slug != "dev" || len(me.Scopes) != len(auth.AllScopes) {
		t.Fatalf("me = %+v", me)
	}
	// The CLI verb reads the same two variables a user exports.
	who := exec.Command(bin, "whoami")
	who.Env = append(withoutEnv(os.Environ(), "SLIPWAY_URL"), "SLIPWAY_URL="+base, "SLIPWAY_TOKEN="+strings.TrimSpace(string(raw)))
	if out, err := who.CombinedOutput(); err != nil || !strings.Contains(string(out), "dev@localhost") || !strings.Contains(string(out), "apps:deploy") {
		t.Fatalf("slipway whoami: %v\n%s", err, out)
	}
	res, err := http.Get(base + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", res, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		<-drained
		for _, l := range rest {
			t.Log(l)
		}
		if err != nil {
			t.Fatalf("slipway dev exited with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("slipway dev did not stop within 60s of SIGINT; stderr:\n%s", stderr.String())
	}
	if alive(pgPID) {
		t.Fatalf("postgres (pid %d) still runs after slipway dev stopped", pgPID)
	}
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// postmasterPID finds postmaster.pid under dir (wherever the cluster keeps
// its data directory) and returns the server's pid.
func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	var pidFile string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "postmaster.pid" {
			pidFile = p
			return filepath.SkipAll
		}
		return nil
	})
	if pidFile == "" {
		t.Fatalf("no postmaster.pid under %s", dir)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	return pid
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
