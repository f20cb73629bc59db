package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/test/proxyrig"
)

const (
	roleEnv    = "SLIPWAY_BENCH_ROLE"
	portEnv    = "SLIPWAY_BENCH_PORT"
	tlsPortEnv = "SLIPWAY_BENCH_TLS_PORT"
	certDirEnv = "SLIPWAY_BENCH_CERT_DIR"
	targetEnv  = "SLIPWAY_BENCH_BACKEND_PORT"
	// benchHost is served over plain HTTP; benchTLSHost, with a
	// certificate, over HTTPS (the gateway redirects plain HTTP for it).
	benchHost    = "bench.example.com"
	benchTLSHost = "secure.bench.example.com"
)

func main() {
	if role := os.Getenv(roleEnv); role != "" {
		if err := runRole(role); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	short := flag.Bool("short", false, "run each target for about 3 s")
	duration := flag.Duration("duration", 20*time.Second, "load duration per target and mode")
	conns := flag.Int("connections", 64, "connections (wrk; HTTP/2: one in 8, with 8 streams each; handshakes: one in 4 at a time)")
	rounds := flag.Int("rounds", 4, "interleaved rounds the duration is split into")
	procs := flag.Int("gateway-gomaxprocs", 0, "GOMAXPROCS of the gateway process (0: Go's default, the CPUs available)")
	only := flag.String("modes", "", "comma-separated modes to run (plain, https-h1, https-h2, handshakes); empty: all")
	flag.Parse()
	var modes []string
	if *only != "" {
		modes = strings.Split(*only, ",")
	}
	if *short {
		*duration, *rounds = 3*time.Second, 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := Run(ctx, Options{Duration: *duration, Connections: *conns, Rounds: *rounds, GatewayProcs: *procs, Modes: modes, Out: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// Options for one comparison.
type Options struct {
	Duration    time.Duration
	Connections int
	// Rounds splits Duration into interleaved rounds (default 1).
	Rounds int
	// GatewayProcs sets GOMAXPROCS for the gateway process; 0 leaves
	// Go's default.
	GatewayProcs int
	// Modes limits the run to the modes named (nil: all).
	Modes []string
	Out   io.Writer
}

// Result is what one mode measured for one target.
type Result struct {
	// Name is the target; Mode is plain, https-h1, https-h2 or
	// handshakes.
	Name, Mode string
	// ReqPerS counts requests, or in the handshakes mode connections.
	ReqPerS  float64
	P99      time.Duration
	Non2xx   int
	ErrCount int
	// Errors counts the errors by kind (Go clients only).
	Errors map[string]int

	requests int64
	cpu      cpuTime // of the proxy's processes
}

// cpuTime is CPU time spent in user space and in the kernel.
type cpuTime struct{ user, system time.Duration }

func (c cpuTime) sub(d cpuTime) cpuTime { return cpuTime{c.user - d.user, c.system - d.system} }
func (c cpuTime) add(d cpuTime) cpuTime { return cpuTime{c.user + d.user, c.system + d.system} }

// per divides c among n requests.
func (c cpuTime) per(n int64) cpuTime {
	if n == 0 {
		return cpuTime{}
	}
	return cpuTime{c.user / time.Duration(n), c.system / time.Duration(n)}
}

func (c cpuTime) total() time.Duration { return c.user + c.system }

func (c cpuTime) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Nanosecond) }
	return fmt.Sprintf("%s (user %s + system %s)", r(c.total()), r(c.user), r(c.system))
}

// CPUPerRequest is the proxy's CPU time (user and system) per request (0
// for the backend alone).
func (r Result) CPUPerRequest() time.Duration { return r.cpu.per(r.requests).total() }

// cpuUse returns the CPU time of pid and its child processes (nginx's
// workers) from /proc; zero for pid 0 or where /proc is missing.
func cpuUse(pid int) cpuTime {
	if pid == 0 {
		return cpuTime{}
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	var use cpuTime
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return cpuTime{}
	}
	// Fields after the parenthesised command: state is field 3, utime 14, stime 15.
	if i := strings.LastIndexByte(string(b), ')'); i > 0 {
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			st, _ := strconv.ParseInt(f[12], 10, 64)
			use = cpuTime{time.Duration(u) * tick, time.Duration(st) * tick}
		}
	}
	kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	for _, k := range strings.Fields(string(kids)) {
		if kid, err := strconv.Atoi(k); err == nil {
			use = use.add(cpuUse(kid))
		}
	}
	return use
}

// target is one server the load goes to.
type target struct {
	name, addr string
	// pid is whose CPU time the target's requests cost: the proxy's
	// (nginx: the master and its workers), 0 for the backend alone.
	pid int
}

// mode is one way of loading the targets: a protocol, a client and what
// the gateway should reach against nginx.
type mode struct {
	name, title string
	// unit names what load counts: requests or handshakes.
	unit    string
	targets []target
	load    func(ctx context.Context, t target, d time.Duration) (Result, error)
	// minRatio and maxP99Ratio are the goals, gateway/nginx (0: none).
	minRatio, maxP99Ratio float64
}

// The goals of issue 18, as ratios gateway/nginx from one run.
const (
	goalPlain      = 0.90
	goalHTTPS      = 0.80
	goalHTTPSP99   = 1.50
	goalHandshakes = 0.50
)

// Run starts the backend, the gateway and nginx (both with one ECDSA
// P-256 certificate for HTTPS), measures each mode and prints the
// results.
func Run(ctx context.Context, o Options) ([]Result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if _, err := proxyrig.LookPath("wrk"); err != nil {
		return nil, fmt.Errorf("wrk is required (Debian package wrk): %w", err)
	}
	tmp, err := os.MkdirTemp("", "gwbench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// 127.0.0.1 is in the certificate and routed too: wrk names the
	// address of its URL in the TLS handshake (SNI).
	cert, err := proxyrig.WriteCertificate(filepath.Join(tmp, "certs"), "bench", benchTLSHost, "127.0.0.1")
	if err != nil {
		return nil, err
	}

	backendPort, gatewayPort, gatewayTLSPort := proxyrig.FreePort(), proxyrig.FreePort(), proxyrig.FreePort()
	nginxPort, nginxTLSPort := proxyrig.FreePort(), proxyrig.FreePort()
	backend, err := startProcess(ctx, self, nil, roleEnv+"=backend", fmt.Sprintf("%s=%d", portEnv, backendPort))
	if err != nil {
		return nil, err
	}
	defer stopProcess(backend)
	gatewayEnv := []string{roleEnv + "=gateway", fmt.Sprintf("%s=%d", portEnv, gatewayPort), fmt.Sprintf("%s=%d", tlsPortEnv, gatewayTLSPort),
		fmt.Sprintf("%s=%d", targetEnv, backendPort), certDirEnv + "=" + cert.Dir}
	if o.GatewayProcs > 0 {
		gatewayEnv = append(gatewayEnv, fmt.Sprintf("GOMAXPROCS=%d", o.GatewayProcs))
	}
	gateway, err := startProcess(ctx, self, nil, gatewayEnv...)
	if err != nil {
		return nil, err
	}
	defer stopProcess(gateway)
	nginx, err := proxyrig.StartNginx(ctx, filepath.Join(tmp, "nginx"), nginxConf(nginxPort, nginxTLSPort, backendPort, o.Connections, cert))
	if err != nil {
		return nil, err
	}
	defer nginx.Stop()

	direct := target{"backend (direct)", fmt.Sprintf("127.0.0.1:%d", backendPort), 0}
	plainNginx := target{"nginx", fmt.Sprintf("127.0.0.1:%d", nginxPort), nginx.Pid()}
	plainGateway := target{"slipway gateway", fmt.Sprintf("127.0.0.1:%d", gatewayPort), gateway.Process.Pid}
	tlsNginx := target{"nginx", fmt.Sprintf("127.0.0.1:%d", nginxTLSPort), nginx.Pid()}
	tlsGateway := target{"slipway gateway", fmt.Sprintf("127.0.0.1:%d", gatewayTLSPort), gateway.Process.Pid}
	for _, t := range []target{direct, plainNginx, plainGateway} {
		if err := waitReady(ctx, "http://"+t.addr, benchHost, nil); err != nil {
			return nil, fmt.Errorf("%s at %s: %w", t.name, t.addr, err)
		}
	}
	for _, t := range []target{tlsNginx, tlsGateway} {
		// Verified here, once: the same certificate on both.
		if err := waitReady(ctx, "https://"+t.addr, benchTLSHost, cert.ClientConfig(benchTLSHost)); err != nil {
			return nil, fmt.Errorf("%s at https://%s: %w", t.name, t.addr, err)
		}
	}

	conns := o.Connections
	h2conns := max(1, conns/8)
	workers := max(1, conns/4)
	modes := []mode{
		{name: "plain", title: fmt.Sprintf("plain HTTP/1.1, keep-alive (wrk, %d connections)", conns), unit: "req/s",
			targets: []target{direct, plainNginx, plainGateway}, minRatio: goalPlain,
			load: func(ctx context.Context, t target, d time.Duration) (Result, error) {
				return runWrk(ctx, "http://"+t.addr+"/", benchHost, conns, d)
			}},
		{name: "https-h1", title: fmt.Sprintf("HTTPS, TLS 1.3, HTTP/1.1 keep-alive (wrk, %d connections)", conns), unit: "req/s",
			targets: []target{tlsNginx, tlsGateway}, minRatio: goalHTTPS, maxP99Ratio: goalHTTPSP99,
			load: func(ctx context.Context, t target, d time.Duration) (Result, error) {
				return runWrk(ctx, "https://"+t.addr+"/", benchTLSHost, conns, d)
			}},
		{name: "https-h2", title: fmt.Sprintf("HTTPS, TLS 1.3, HTTP/2 (Go client, %d connections x 8 streams)", h2conns), unit: "req/s",
			targets: []target{tlsNginx, tlsGateway}, minRatio: goalHTTPS, maxP99Ratio: goalHTTPSP99,
			load: func(ctx context.Context, t target, d time.Duration) (Result, error) {
				return h2Load(ctx, t.addr, h2conns, 8, d), nil
			}},
		{name: "handshakes", title: fmt.Sprintf("new TLS 1.3 connections: full handshake (X25519, ECDSA P-256), one request, close (Go client, %d at a time)", workers), unit: "handshakes/s",
			targets: []target{tlsNginx, tlsGateway}, minRatio: goalHandshakes,
			load: func(ctx context.Context, t target, d time.Duration) (Result, error) {
				return handshakeLoad(ctx, t.addr, workers, d), nil
			}},
	}
	rounds := max(1, o.Rounds)
	per := max(time.Second, o.Duration/time.Duration(rounds))
	fmt.Fprintf(o.Out, "one backend on loopback; %s per target in %d interleaved rounds; GOMAXPROCS of the gateway: %s\n", per*time.Duration(rounds), rounds, procsLabel(o.GatewayProcs))
	var all []Result
	for _, m := range modes {
		if o.Modes != nil && !slices.Contains(o.Modes, m.name) {
			continue
		}
		results, err := measure(ctx, m, rounds, per, o.Out)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		all = append(all, results...)
	}
	return all, nil
}

func procsLabel(n int) string {
	if n == 0 {
		return "the CPUs available"
	}
	return strconv.Itoa(n)
}

// measure loads m's targets in interleaved rounds and prints the figures,
// the last two targets being nginx and the gateway.
func measure(ctx context.Context, m mode, rounds int, per time.Duration, out io.Writer) ([]Result, error) {
	results := make([]Result, len(m.targets))
	p99s := make([][]time.Duration, len(m.targets))
	for i, t := range m.targets {
		results[i].Name, results[i].Mode = t.name, m.name
		// A short warm-up fills connection pools on both sides.
		if _, err := m.load(ctx, t, time.Second); err != nil {
			return nil, fmt.Errorf("%s warm-up: %w", t.name, err)
		}
	}
	ng, gw := len(m.targets)-2, len(m.targets)-1
	var tputRatios, p99Ratios, cpuRatios []float64
	for round := range rounds {
		// Rounds interleave the targets (in a rotating order), so load
		// from other processes on the machine hits all alike.
		got := make([]Result, len(m.targets))
		for k := range m.targets {
			i := (k + round) % len(m.targets)
			cpu0 := cpuUse(m.targets[i].pid)
			r, err := m.load(ctx, m.targets[i], per)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m.targets[i].name, err)
			}
			r.cpu = cpuUse(m.targets[i].pid).sub(cpu0)
			results[i].cpu = results[i].cpu.add(r.cpu)
			results[i].requests += r.requests
			results[i].ReqPerS += r.ReqPerS / float64(rounds)
			results[i].Non2xx += r.Non2xx
			results[i].ErrCount += r.ErrCount
			for k, n := range r.Errors {
				if results[i].Errors == nil {
					results[i].Errors = map[string]int{}
				}
				results[i].Errors[k] += n
			}
			p99s[i] = append(p99s[i], r.P99)
			got[i] = r
		}
		tputRatios = append(tputRatios, got[gw].ReqPerS/got[ng].ReqPerS)
		p99Ratios = append(p99Ratios, float64(got[gw].P99)/float64(got[ng].P99))
		cpuRatios = append(cpuRatios, float64(got[gw].CPUPerRequest())/float64(got[ng].CPUPerRequest()))
	}
	for i := range results {
		results[i].P99 = median(p99s[i])
	}
	per1 := "request"
	if m.unit == "handshakes/s" {
		per1 = "handshake"
	}
	fmt.Fprintf(out, "\n%s\n", m.title)
	fmt.Fprintf(out, "  %-18s %13s %10s %7s   %s\n", "target", m.unit, "p99", "errors", "proxy CPU per "+per1+" (all its processes)")
	for _, r := range results {
		cpu := "-"
		if r.cpu.total() > 0 {
			cpu = r.cpu.per(r.requests).String()
		}
		fmt.Fprintf(out, "  %-18s %13.0f %10s %7d   %s\n", r.Name, r.ReqPerS, r.P99.Round(10*time.Microsecond), r.Non2xx+r.ErrCount, cpu)
	}
	for _, r := range results {
		for k, n := range r.Errors {
			fmt.Fprintf(out, "  %s errors: %d x %s\n", r.Name, n, k)
		}
	}
	n, g := results[ng], results[gw]
	fmt.Fprintf(out, "  gateway/nginx: %s %.2f (%s; rounds %s)", m.unit, g.ReqPerS/n.ReqPerS, goal(">=", m.minRatio, g.ReqPerS/n.ReqPerS), spread(tputRatios))
	fmt.Fprintf(out, ", p99 %.2f (%s; rounds %s)", float64(g.P99)/float64(n.P99), goal("<=", m.maxP99Ratio, float64(g.P99)/float64(n.P99)), spread(p99Ratios))
	fmt.Fprintf(out, ", CPU per %s %.2f (rounds %s)\n", per1, float64(g.CPUPerRequest())/float64(n.CPUPerRequest()), spread(cpuRatios))
	if m.targets[0].pid == 0 {
		fmt.Fprintf(out, "  gateway/direct: %s %.2f, p99 %.2f\n", m.unit, g.ReqPerS/results[0].ReqPerS, float64(g.P99)/float64(results[0].P99))
	}
	return results, nil
}

// goal prints a ratio's goal and whether it is met ("no goal" for 0).
func goal(op string, want, got float64) string {
	switch {
	case want == 0:
		return "no goal"
	case op == ">=" && got >= want, op == "<=" && got <= want:
		return fmt.Sprintf("goal %s %.2f: met", op, want)
	}
	return fmt.Sprintf("goal %s %.2f: NOT met", op, want)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// spread prints the lowest and highest per-round ratio.
func spread(rs []float64) string {
	return fmt.Sprintf("%.2f-%.2f", slices.Min(rs), slices.Max(rs))
}

// nginxConf proxies plain HTTP and HTTPS (TLS 1.3, HTTP/2 offered) to the
// backend as the gateway does.
func nginxConf(port, tlsPort, backendPort, conns int, cert proxyrig.Certificate) string {
	return proxyrig.NginxConfig("auto", fmt.Sprintf(`
  # As the gateway: client and upstream connections are reused without a
  # request limit (nginx closes them after 1000 requests by default).
  keepalive_requests 1000000;
  upstream backend {
    server 127.0.0.1:%d;
    keepalive %d;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:%d;
    listen 127.0.0.1:%d ssl http2;
    ssl_certificate %s;
    ssl_certificate_key %s;
    ssl_protocols TLSv1.3;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
    }
  }
`, backendPort, conns*2, port, tlsPort, cert.CertFile, cert.KeyFile))
}

var (
	reqPerS = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	reqs    = regexp.MustCompile(`(\d+) requests in`)
	p99     = regexp.MustCompile(`\n\s+99%\s+([0-9.]+)(us|ms|s)`)
	non2xx  = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	sockErr = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func runWrk(ctx context.Context, url, host string, conns int, d time.Duration) (Result, error) {
	wrk, _ := proxyrig.LookPath("wrk")
	cmd := exec.CommandContext(ctx, wrk, "-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", max(1, int(d.Seconds()))), "--latency", "-H", "Host: "+host, url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return Result{}, fmt.Errorf("wrk: %w: %s", err, out)
	}
	s := string(out)
	var r Result
	m := reqPerS.FindStringSubmatch(s)
	if m == nil {
		return Result{}, fmt.Errorf("wrk output without Requests/sec: %s", s)
	}
	r.ReqPerS, _ = strconv.ParseFloat(m[1], 64)
	if m := reqs.FindStringSubmatch(s); m != nil {
		r.requests, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := p99.FindStringSubmatch(s); m != nil {
		v, _ := strconv.ParseFloat(m[1], 64)
		unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[m[2]]
		r.P99 = time.Duration(v * float64(unit))
	}
	if m := non2xx.FindStringSubmatch(s); m != nil {
		r.Non2xx, _ = strconv.Atoi(m[1])
	}
	if m := sockErr.FindStringSubmatch(s); m != nil {
		for _, x := range m[1:] {
			n, _ := strconv.Atoi(x)
			r.ErrCount += n
		}
	}
	return r, nil
}

func startProcess(ctx context.Context, bin string, args []string, env ...string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	return cmd, nil
}

func stopProcess(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// waitReady waits until base answers 200 for host; with tlsCfg, over
// TLS, verifying the certificate.
func waitReady(ctx context.Context, base, host string, tlsCfg *tls.Config) error {
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(15 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
		req.Host = host
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func runRole(role string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	port := os.Getenv(portEnv)
	switch role {
	case "backend":
		body := []byte("hello from the backend\n")
		srv := &http.Server{Addr: "127.0.0.1:" + port, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write(body)
		})}
		go func() { <-ctx.Done(); srv.Close() }()
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	case "gateway":
		if path := os.Getenv("SLIPWAY_BENCH_CPUPROFILE"); path != "" {
			// For tuning: go tool pprof the gateway's own CPU time.
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		ingress.TuneGC()
		err := runGateway(ctx, port, os.Getenv(tlsPortEnv), os.Getenv(targetEnv), os.Getenv(certDirEnv))
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		fmt.Fprintf(os.Stderr, "gateway process CPU: user %.2fs system %.2fs\n", time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds())
		return err
	}
	return fmt.Errorf("unknown %s %q", roleEnv, role)
}

// loopback resolves the benchmark's one service name to 127.0.0.1, as
// Docker's DNS would resolve it to the task address.
type loopback struct{}

func (loopback) LookupHost(context.Context, string) ([]string, error) {
	return []string{"127.0.0.1"}, nil
}

// runGateway runs the real gateway (ingress.Run) fed by a real Publisher
// over a unix socket, as in production, with the operator certificate in
// certDir for HTTPS.
func runGateway(ctx context.Context, port, tlsPort, backendPort, certDir string) error {
	dir, err := os.MkdirTemp("", "gwbench-gw")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bp, err := strconv.Atoi(backendPort)
	if err != nil {
		return fmt.Errorf("%s: %w", targetEnv, err)
	}
	pub := ingress.NewPublisher()
	// The certificate is chosen by the name in the TLS handshake, which
	// wrk takes from its URL: 127.0.0.1 is routed (and in the
	// certificate) for that; requests name benchTLSHost.
	var routes []ingress.Route
	for _, host := range []string{benchHost, benchTLSHost, "127.0.0.1"} {
		routes = append(routes, ingress.Route{Hostname: host, Visibility: ingress.VisibilityPublic,
			Backend: &ingress.Backend{Service: "backend", Port: bp}})
	}
	if err := pub.Publish(ingress.Table{Version: 1, Routes: routes}); err != nil {
		return err
	}
	sock := filepath.Join(dir, "cp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(ingress.RoutesPath, pub)
	mux.Handle(ingress.CertificatesPath, ingress.CertificateReceiver(func(context.Context, ingress.CertificateReport) error { return nil }))
	go http.Serve(ln, mux)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return ingress.Run(ctx, ingress.Config{
		HTTPAddr:  "127.0.0.1:" + port,
		HTTPSAddr: "127.0.0.1:" + tlsPort,
		TLS:       ingress.TLSOptions{CertDir: certDir},
		Source:    ingress.Source{SocketPath: sock},
		DataDir:   filepath.Join(dir, "data"),
		Log:       log,
		Resolver:  loopback{},
		// Recorded as in production with a metrics listener.
		Metrics: metrics.New(nil),
	})
}
