package chaostest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// SecretKey is the key-encryption key serve and worker get in these tests.
var SecretKey = strings.Repeat("5a", 32)

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// Binary returns the binary under test: SLIPWAY_BIN (make test sets it),
// or one built once per test binary.
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("SLIPWAY_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..", "..")
		dir, err := os.MkdirTemp("", "slipway-chaos-bin-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "slipway")
		cmd := exec.Command("go", "build", "-o", built, "./cmd/slipway")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build slipway: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// Process is a running slipway subcommand whose output goes to a log file
// that is printed when the test fails.
type Process struct {
	Cmd  *exec.Cmd
	Log  string
	done chan struct{}
}

// Start runs `bin args...` with the test's environment plus env. The
// process is killed when the test ends, if still running.
func Start(t testing.TB, bin, logName string, env []string, args ...string) *Process {
	t.Helper()
	logFile, err := os.CreateTemp(t.TempDir(), logName+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Process{Cmd: cmd, Log: logFile.Name(), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			out, _ := os.ReadFile(p.Log)
			t.Logf("%s:\n%s", logName, tail(out, 200))
		}
	})
	return p
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func tail(b []byte, lines int) []byte {
	parts := bytes.Split(b, []byte("\n"))
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return bytes.Join(parts, []byte("\n"))
}

// Env is the environment serve and worker need for databaseURL. It keeps
// serve from managing a gateway container: the tests that need one run
// their own (StartGateway), which serve would otherwise replace.
func Env(databaseURL string, extra ...string) []string {
	return append([]string{"DATABASE_URL=" + databaseURL, "SLIPWAY_IMAGES_PULL=false", "SLIPWAY_SECRET_KEY=" + SecretKey, "SLIPWAY_GATEWAY=off"}, extra...)
}

// Server is a running `slipway serve`.
type Server struct {
	*Process
	URL string
}

// StartServe runs `slipway serve` on a free port and waits until /healthz
// answers. extra adds environment variables (SLIPWAY_GATEWAY_SOCKET_DIR...).
func StartServe(t testing.TB, bin, databaseURL string, extra ...string) *Server {
	t.Helper()
	return StartServeOn(t, bin, databaseURL, FreePort(t), extra...)
}

// StartServeOn is StartServe on a given port, so a restarted serve keeps
// its address.
func StartServeOn(t testing.TB, bin, databaseURL string, port int, extra ...string) *Server {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// Without a socket directory of its own, serve would try the host's.
	env := Env(databaseURL, append([]string{"SLIPWAY_LISTEN=" + addr, "SLIPWAY_GATEWAY_SOCKET_DIR=" + t.TempDir()}, extra...)...)
	p := Start(t, bin, "serve", env, "serve")
	s := &Server{Process: p, URL: "http://" + addr}
	WaitFor(t, time.Minute, "slipway serve to answer /healthz", func() bool {
		if p.Exited() {
			out, _ := os.ReadFile(p.Log)
			t.Fatalf("slipway serve exited at start:\n%s", tail(out, 50))
		}
		resp, err := http.Get(s.URL + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return s
}

// StartWorker runs `slipway worker` against the database.
func StartWorker(t testing.TB, bin, databaseURL, logName string, extra ...string) *Process {
	t.Helper()
	return Start(t, bin, logName, Env(databaseURL, extra...), "worker")
}

// FreePort returns a TCP port nothing listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// WaitFor polls cond every 200 ms until it holds, failing the test after
// timeout.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Team is a fresh team with an owner and an all-scope API token.
type Team struct {
	Team  store.Team
	User  store.User
	Token string
}

// Client is an API client for the team on s.
func (tm Team) Client(t testing.TB, s *Server) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, tm.Token)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Actor is the team's owner as a service actor.
func (tm Team) Actor() service.Actor {
	return service.Actor{TeamID: tm.Team.ID, UserID: tm.User.ID, Scopes: auth.ScopesOf(auth.RoleOwner)}
}

// Database creates a fresh migrated database of the test's own and
// returns its URL, for the processes, and a store over a pool to it that
// is closed when the test ends (Store.Pool for River and raw queries).
func Database(t testing.TB) (url string, st *store.Store) {
	t.Helper()
	url = storetest.NewDatabaseURL(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return url, store.New(pool)
}

// NewTeam creates a team named after id, its owner (who cannot log in with
// a password) and an API token with every owner scope.
func NewTeam(t testing.TB, st *store.Store, id string) Team {
	t.Helper()
	ctx := context.Background()
	var tm Team
	var err error
	if tm.Team, err = st.CreateTeam(ctx, "Chaos "+id, "chaos-"+id); err != nil {
		t.Fatal(err)
	}
	if tm.User, err = st.CreateUser(ctx, "owner-"+id+"@chaos.test", "Owner "+id, "!"); err != nil {
		t.Fatal(err)
	}
	if err := st.AddMember(ctx, tm.Team.ID, tm.User.ID, store.RoleOwner); err != nil {
		t.Fatal(err)
	}
	a := tm.Actor()
	if _, tm.Token, err = service.CreateToken(ctx, st, a, service.TokenRequest{Name: "chaos", Scopes: auth.Strings(a.Scopes)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	return tm
}

// EnvironmentCleanup removes environments from the Swarm when the test
// ends, in one cleanup registered at creation: create it before starting
// a worker (whose drift repair would bring services back) or a gateway
// (which holds the environments' ingress overlays), so they go first.
type EnvironmentCleanup struct {
	mu  sync.Mutex
	ids []string
}

// Environments returns a new EnvironmentCleanup for the test.
func Environments(t testing.TB) *EnvironmentCleanup {
	t.Helper()
	cli := swarmtest.Client(t)
	e := &EnvironmentCleanup{}
	t.Cleanup(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, id := range e.ids {
			swarmtest.RemoveAndCheck(t, cli, swarm.LabelEnv+"="+id)
		}
	})
	return e
}

// Add removes the environment too (once, however often it is added).
func (e *EnvironmentCleanup) Add(envID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !slices.Contains(e.ids, envID) {
		e.ids = append(e.ids, envID)
	}
}

// WaitDeployment polls the deployment through the API until it is final.
func WaitDeployment(t testing.TB, c *client.Client, id string, timeout time.Duration) (state, errorCode, errorMessage string) {
	t.Helper()
	WaitFor(t, timeout, "deployment "+id+" to finish", func() bool {
		d, err := c.Deployment(context.Background(), id)
		if err != nil {
			t.Logf("GET deployment %s: %v", id, err)
			return false
		}
		state, errorCode, errorMessage = d.State, d.ErrorCode, d.ErrorMessage
		return d.Terminal
	})
	return state, errorCode, errorMessage
}
