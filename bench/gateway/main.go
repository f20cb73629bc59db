package main

import (
	"context"
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
)

const (
	roleEnv   = "SLIPWAY_BENCH_ROLE"
	portEnv   = "SLIPWAY_BENCH_PORT"
	targetEnv = "SLIPWAY_BENCH_BACKEND_PORT"
	benchHost = "bench.example.com"
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
	duration := flag.Duration("duration", 20*time.Second, "wrk duration per target")
	conns := flag.Int("connections", 64, "wrk connections")
	rounds := flag.Int("rounds", 4, "interleaved rounds the duration is split into")
	procs := flag.Int("gateway-gomaxprocs", 0, "GOMAXPROCS of the gateway process (0: Go's default, the CPUs available)")
	flag.Parse()
	if *short {
		*duration, *rounds = 3*time.Second, 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := Run(ctx, Options{Duration: *duration, Connections: *conns, Rounds: *rounds, GatewayProcs: *procs, Out: os.Stdout}); err != nil {
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
	Out          io.Writer
}

// Result is what wrk measured for one target.
type Result struct {
	Name     string
	ReqPerS  float64
	P99      time.Duration
	Non2xx   int
	ErrCount int

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

// Run starts the backend, the gateway and nginx, measures each with wrk and
// prints the results.
func Run(ctx context.Context, o Options) ([]Result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	for _, bin := range []string{"wrk", "nginx"} {
		if _, err := lookPath(bin); err != nil {
			return nil, fmt.Errorf("%s is required (Debian package %s): %w", bin, bin, err)
		}
	}
	tmp, err := os.MkdirTemp("", "gwbench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	backendPort, gatewayPort, nginxPort := freePort(), freePort(), freePort()
	backend, err := startProcess(ctx, self, nil, roleEnv+"=backend", fmt.Sprintf("%s=%d", portEnv, backendPort))
	if err != nil {
		return nil, err
	}
	defer stopProcess(backend)
	gatewayEnv := []string{roleEnv + "=gateway", fmt.Sprintf("%s=%d", portEnv, gatewayPort), fmt.Sprintf("%s=%d", targetEnv, backendPort)}
	if o.GatewayProcs > 0 {
		gatewayEnv = append(gatewayEnv, fmt.Sprintf("GOMAXPROCS=%d", o.GatewayProcs))
	}
	gateway, err := startProcess(ctx, self, nil, gatewayEnv...)
	if err != nil {
		return nil, err
	}
	defer stopProcess(gateway)
	nginxBin, _ := lookPath("nginx")
	conf := filepath.Join(tmp, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(nginxPort, backendPort, o.Connections)), 0o644); err != nil {
		return nil, err
	}
	nginx, err := startProcess(ctx, nginxBin, []string{"-p", tmp, "-c", conf, "-e", filepath.Join(tmp, "error.log"), "-g", "daemon off;"})
	if err != nil {
		return nil, err
	}
	defer stopProcess(nginx)

	// pid says whose CPU time a target's requests cost: the proxy's
	// (nginx: the master and its workers), none for the backend alone.
	targets := []struct {
		name, addr string
		pid        int
	}{
		{"backend (direct)", fmt.Sprintf("127.0.0.1:%d", backendPort), 0},
		{"nginx", fmt.Sprintf("127.0.0.1:%d", nginxPort), nginx.Process.Pid},
		{"slipway gateway", fmt.Sprintf("127.0.0.1:%d", gatewayPort), gateway.Process.Pid},
	}
	for _, t := range targets {
		if err := waitReady(ctx, t.addr); err != nil {
			return nil, fmt.Errorf("%s at %s: %w", t.name, t.addr, err)
		}
	}
	rounds := max(1, o.Rounds)
	per := max(time.Second, o.Duration/time.Duration(rounds))
	results := make([]Result, len(targets))
	p99s := make([][]time.Duration, len(targets))
	for i, t := range targets {
		results[i].Name = t.name
		// A short warm-up fills connection pools on both sides.
		if _, err := runWrk(ctx, t.addr, o.Connections, time.Second); err != nil {
			return nil, fmt.Errorf("%s warm-up: %w", t.name, err)
		}
	}
	var tputRatios, p99Ratios, cpuRatios []float64
	for round := range rounds {
		// Rounds interleave the targets (in a rotating order), so load
		// from other processes on the machine hits all three alike.
		got := make([]Result, len(targets))
		for k := range targets {
			i := (k + round) % len(targets)
			cpu0 := cpuUse(targets[i].pid)
			r, err := runWrk(ctx, targets[i].addr, o.Connections, per)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", targets[i].name, err)
			}
			r.cpu = cpuUse(targets[i].pid).sub(cpu0)
			results[i].cpu = results[i].cpu.add(r.cpu)
			results[i].requests += r.requests
			got[i] = r
			results[i].ReqPerS += r.ReqPerS / float64(rounds)
			results[i].Non2xx += r.Non2xx
			results[i].ErrCount += r.ErrCount
			p99s[i] = append(p99s[i], r.P99)
		}
		tputRatios = append(tputRatios, got[2].ReqPerS/got[1].ReqPerS)
		p99Ratios = append(p99Ratios, float64(got[2].P99)/float64(got[1].P99))
		cpuRatios = append(cpuRatios, float64(got[2].CPUPerRequest())/float64(got[1].CPUPerRequest()))
	}
	for i := range results {
		results[i].P99 = median(p99s[i])
	}
	fmt.Fprintf(o.Out, "wrk: %d connections, %s per target in %d interleaved rounds, one backend on loopback\n", o.Connections, per*time.Duration(rounds), rounds)
	fmt.Fprintf(o.Out, "%-18s %12s %10s %8s\n", "target", "req/s", "p99", "errors")
	for _, r := range results {
		fmt.Fprintf(o.Out, "%-18s %12.0f %10s %8d\n", r.Name, r.ReqPerS, r.P99.Round(10*time.Microsecond), r.Non2xx+r.ErrCount)
	}
	direct, ng, gw := results[0], results[1], results[2]
	fmt.Fprintf(o.Out, "proxy CPU per request (all processes of each; less sensitive to other load than req/s):\n")
	fmt.Fprintf(o.Out, "  nginx   %s\n  gateway %s\n", ng.cpu.per(ng.requests), gw.cpu.per(gw.requests))
	fmt.Fprintf(o.Out, "CPU/req    gateway/nginx %.2f (rounds %s)\n", float64(gw.CPUPerRequest())/float64(ng.CPUPerRequest()), spread(cpuRatios))
	fmt.Fprintf(o.Out, "throughput gateway/nginx %.2f (target >= 0.90; rounds %s), gateway/direct %.2f\n", gw.ReqPerS/ng.ReqPerS, spread(tputRatios), gw.ReqPerS/direct.ReqPerS)
	fmt.Fprintf(o.Out, "p99        gateway/nginx %.2f (target <= 1.25; rounds %s), gateway/direct %.2f\n", float64(gw.P99)/float64(ng.P99), spread(p99Ratios), float64(gw.P99)/float64(direct.P99))
	return results, nil
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

func nginxConf(port, backendPort, conns int) string {
	return fmt.Sprintf(`worker_processes auto;
pid nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path body;
  proxy_temp_path proxy;
  fastcgi_temp_path fastcgi;
  uwsgi_temp_path uwsgi;
  scgi_temp_path scgi;
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
}
`, backendPort, conns*2, port)
}

var (
	reqPerS = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	reqs    = regexp.MustCompile(`(\d+) requests in`)
	p99     = regexp.MustCompile(`\n\s+99%\s+([0-9.]+)(us|ms|s)`)
	non2xx  = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	sockErr = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func runWrk(ctx context.Context, addr string, conns int, d time.Duration) (Result, error) {
	wrk, _ := lookPath("wrk")
	cmd := exec.CommandContext(ctx, wrk, "-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", max(1, int(d.Seconds()))), "--latency", "-H", "Host: "+benchHost, "http://"+addr+"/")
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

func lookPath(name string) (string, error) {
	for _, dir := range []string{"/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return exec.LookPath(name)
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

func waitReady(ctx context.Context, addr string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		req.Host = benchHost
		resp, err := http.DefaultClient.Do(req)
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

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
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
		err := runGateway(ctx, port, os.Getenv(targetEnv))
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
// over a unix socket, as in production.
func runGateway(ctx context.Context, port, backendPort string) error {
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
	if err := pub.Publish(ingress.Table{Version: 1, Routes: []ingress.Route{{
		Hostname: benchHost, Visibility: ingress.VisibilityPublic,
		Backend: &ingress.Backend{Service: "backend", Port: bp},
	}}}); err != nil {
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
		HTTPAddr: "127.0.0.1:" + port,
		Source:   ingress.Source{SocketPath: sock},
		DataDir:  filepath.Join(dir, "data"),
		Log:      log,
		Resolver: loopback{},
		// Recorded as in production with a metrics listener.
		Metrics: metrics.New(nil),
	})
}
