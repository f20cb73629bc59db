package security

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/store/storetest"
	"github.com/slipwayhq/slipway/test/summary"
)

// TestServe_FirstRunNeedsTheSetupToken runs the real `slipway serve` on a
// fresh database: its first start logs a setup token once and writes it to
// <data_dir>/setup-token with mode 0600; /setup over HTTP refuses a sign-up
// without it and with a wrong one, and accepts it; a restart before that
// does not print the token again. Once the owner exists, the token opens
// nothing and a restart issues none.
func TestServe_FirstRunNeedsTheSetupToken(t *testing.T) {
	if os.Getenv("DATABASE_URL") == "" {
		t.Skip("DATABASE_URL is not set")
	}
	t.Parallel()
	bin := slipwayBinary(t)
	dbURL := storetest.NewDatabaseURL(t)
	dir := t.TempDir()
	keyText, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "secret.key")
	if err := os.WriteFile(keyFile, []byte(keyText), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "DATABASE_URL=" + dbURL,
		"SLIPWAY_SECRET_KEY_FILE=" + keyFile, "SLIPWAY_DATA_DIR=" + dataDir, "SLIPWAY_INGRESS_ENABLED=false"}

	log1, _ := startServe(t, bin, env)
	tokenRE := regexp.MustCompile(`setup_token=(slws_[A-Za-z0-9_-]+)`)
	m := tokenRE.FindStringSubmatch(log1.wait(t, "setup_token="))
	if m == nil {
		t.Fatalf("serve's first start logged no setup token:\n%s", log1.text())
	}
	token := m[1]
	fi, err := os.Stat(filepath.Join(dataDir, "setup-token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("setup-token file: %v %v, want mode 0600", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dataDir, "setup-token")); strings.TrimSpace(string(b)) != token {
		t.Fatalf("setup-token file holds %q, want the logged token", b)
	}
	// Restarted before anyone signed up: the token stays, and is not
	// printed a second time.
	log1.stop(t)
	log2, base := startServe(t, bin, env)
	log2.wait(t, "setup token in the file")
	if strings.Contains(log2.text(), token) {
		t.Fatalf("a restart printed the setup token again:\n%s", log2.text())
	}

	for _, tt := range []struct {
		name, token string
		want        int
	}{
		{"without the token", "", http.StatusForbidden},
		{"with a wrong token", "slws_" + strings.Repeat("A", 43), http.StatusForbidden},
		{"with the token", token, http.StatusSeeOther},
		{"with the token once an owner exists", token, http.StatusSeeOther},
	} {
		got := postSetup(t, base, url.Values{"email": {"first-" + strconv.Itoa(len(tt.name)) + "@example.com"}, "password": {"correct horse battery"}, "team": {"Acme"}, "token": {tt.token}})
		if got.status != tt.want {
			t.Fatalf("/setup %s: status %d (location %q), want %d", tt.name, got.status, got.location, tt.want)
		}
		if tt.want == http.StatusSeeOther && strings.Contains(tt.name, "once") && got.location != "/login" {
			t.Fatalf("/setup %s: redirected to %q, want /login (first run is over)", tt.name, got.location)
		}
	}
	log2.stop(t)
	log3, _ := startServe(t, bin, env)
	log3.wait(t, "serving")
	if strings.Contains(log3.text(), "first run") {
		t.Fatalf("serve with an owner still talks of first run:\n%s", log3.text())
	}
	summary.Line(t, "first run: serve's setup token logged once, file mode 0600; /setup refused without it and with a wrong one, spent once an owner exists")
}

type setupResult struct {
	status   int
	location string
}

// postSetup submits the first-run form as a browser would (CSRF cookie
// from the form page first).
func postSetup(t *testing.T, base string, form url.Values) setupResult {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	u, _ := url.Parse(base)
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "slipway_csrf" {
			form.Set("_csrf", ck.Value)
		}
	}
	res, err = c.PostForm(base+"/setup", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return setupResult{status: res.StatusCode, location: res.Header.Get("Location")}
}

// serveLog is a running serve's standard error, kept as it arrives.
type serveLog struct {
	cmd   *exec.Cmd
	lines chan string
	seen  []string
	done  chan struct{}
}

func (l *serveLog) text() string { return strings.Join(l.seen, "\n") }

// wait reads lines until one contains want, and returns it.
func (l *serveLog) wait(t *testing.T, want string) string {
	t.Helper()
	for _, s := range l.seen {
		if strings.Contains(s, want) {
			return s
		}
	}
	deadline := time.After(90 * time.Second)
	for {
		select {
		case s, ok := <-l.lines:
			if !ok {
				t.Fatalf("serve exited before logging %q:\n%s", want, l.text())
			}
			l.seen = append(l.seen, s)
			if strings.Contains(s, want) {
				return s
			}
		case <-deadline:
			t.Fatalf("serve did not log %q in 90s:\n%s", want, l.text())
		}
	}
}

func (l *serveLog) stop(t *testing.T) {
	t.Helper()
	_ = l.cmd.Process.Signal(os.Interrupt)
	select {
	case <-l.done:
	case <-time.After(30 * time.Second):
		_ = l.cmd.Process.Kill()
		<-l.done
	}
}

// startServe runs serve on a free port and waits until it listens.
func startServe(t *testing.T, bin string, env []string) (*serveLog, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--listen", addr)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l := &serveLog{cmd: cmd, lines: make(chan string, 1000), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			l.lines <- sc.Text()
		}
		close(l.lines)
		_ = cmd.Wait()
		close(l.done)
	}()
	t.Cleanup(func() { l.stop(t) })
	l.wait(t, `msg=serving`)
	return l, "http://" + addr
}
