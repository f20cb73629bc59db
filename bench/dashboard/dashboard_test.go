package dashboard

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/authcache"
	"github.com/slipwayhq/slipway/store/changecache"
	"github.com/slipwayhq/slipway/store/storetest"
)

const (
	teams       = 10
	appsPerTeam = 100
	clients     = 50
)

// caller is one team's credentials: a dashboard session and an API token.
type caller struct{ cookie, token string }

func BenchmarkDashboard(b *testing.B) {
	duration := 20 * time.Second
	if d, err := time.ParseDuration(os.Getenv("SLIPWAY_BENCH_DURATION")); err == nil {
		duration = d
	}
	ctx := context.Background()
	st := storetest.NewSchema(b)
	callers, owner := seed(b, ctx, st)
	bigApp := seedBigApplication(b, ctx, st, owner.team, owner.user)

	// As serve does: sessions and tokens, and what the busiest pages read
	// of a team, are kept while serve listens for their changes.
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	authCache := authcache.New(st, logger)
	teamReads := changecache.New(st, store.TeamDataChannel, logger)
	storetest.RunListening(b, authCache.Run, authCache.Listening)
	storetest.RunListening(b, teamReads.Run, teamReads.Listening)
	f := app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: logger, AuthCache: authCache, TeamReads: teamReads})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = f.Listener(ln) }()
	defer func() { _ = f.Shutdown() }()
	base := "http://" + ln.Addr().String()

	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	phases := []struct {
		name string
		req  func(c caller) *http.Request
	}{
		{"static /static/css/slipway.css", func(caller) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, base+"/static/css/slipway.css", nil)
			return r
		}},
		{"page /applications", func(c caller) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, base+"/applications", nil)
			r.AddCookie(&http.Cookie{Name: "slipway_session", Value: c.cookie})
			return r
		}},
		{fmt.Sprintf("page application (%d svc, %d dep)", bigServices, bigDeployments), func(caller) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, base+"/applications/"+bigApp, nil)
			r.AddCookie(&http.Cookie{Name: "slipway_session", Value: callers[0].cookie})
			return r
		}},
		{"api GET /api/v1/applications", func(c caller) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, base+"/api/v1/applications", nil)
			r.Header.Set("Authorization", "Bearer "+c.token)
			return r
		}},
	}
	b.ResetTimer()
	var staticP99 time.Duration
	for _, p := range phases {
		res := load(b, httpc, callers, duration, p.req)
		ratio := ""
		if staticP99 == 0 {
			staticP99 = res.p99
		} else {
			ratio = fmt.Sprintf("  p99 = %.1f× static", float64(res.p99)/float64(staticP99))
		}
		fmt.Printf("%-40s %7d req  %8.0f req/s  %7d B/resp  cpu %5.2f ms/req (machine %5.2f)  p50 %-10v p99 %-10v errors %d%s\n",
			p.name, res.n, res.rps, res.bytes, res.cpuPerReq, res.machinePerReq, res.p50, res.p99, res.errors, ratio)
	}
}

type result struct {
	n, errors int
	// bytes is the last response's body size.
	bytes int64
	rps   float64
	// cpuPerReq is this process's CPU time (server and clients, not
	// Postgres) per successful request, in milliseconds: steadier than
	// latency on a machine that other work shares.
	cpuPerReq float64
	// machinePerReq is the whole machine's busy CPU time per successful
	// request (this process, Postgres and anything else running).
	machinePerReq float64
	p50, p99      time.Duration
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineBusy is the CPU time the whole machine has spent busy (all but
// idle and iowait), from /proc/stat; 0 where it cannot be read.
func machineBusy() time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	fields := strings.Fields(line)
	var busy int64
	for i, f := range fields[1:] {
		ticks, _ := strconv.ParseInt(f, 10, 64)
		if i != 3 && i != 4 && i < 8 { // idle, iowait; guest time is counted in user
			busy += ticks
		}
	}
	return time.Duration(busy) * time.Second / 100 // USER_HZ
}

// load runs clients goroutines issuing requests back to back for d.
func load(b *testing.B, httpc *http.Client, callers []caller, d time.Duration, req func(caller) *http.Request) result {
	var mu sync.Mutex
	var lat []time.Duration
	var size atomic.Int64
	errors := 0
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start, cpu0, busy0 := time.Now(), processCPU(), machineBusy()
	for i := range clients {
		wg.Go(func() {
			c := callers[i%len(callers)]
			var mine []time.Duration
			bad := 0
			for time.Now().Before(deadline) {
				t0 := time.Now()
				res, err := httpc.Do(req(c))
				if err == nil {
					n, _ := io.Copy(io.Discard, res.Body)
					res.Body.Close()
					size.Store(n)
				}
				if err != nil || res.StatusCode != http.StatusOK {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errors += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed, cpu, busy := time.Since(start), processCPU()-cpu0, machineBusy()-busy0
	if len(lat) == 0 {
		b.Fatalf("no successful requests (%d errors)", errors)
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(float64(len(lat))*p))] }
	return result{n: len(lat), errors: errors, bytes: size.Load(), rps: float64(len(lat)) / elapsed.Seconds(),
		cpuPerReq:     float64(cpu.Microseconds()) / 1000 / float64(len(lat)),
		machinePerReq: float64(busy.Microseconds()) / 1000 / float64(len(lat)),
		p50:           pct(0.50), p99: pct(0.99)}
}

// seed creates the teams, their applications, an owner session and an
// all-scope token per team.
func seed(b *testing.B, ctx context.Context, st *store.Store) ([]caller, firstOwner) {
	var out []caller
	var first firstOwner
	for i := range teams {
		u, t, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{
			Email: fmt.Sprintf("owner%d@example.com", i), Password: "correct horse battery", TeamName: fmt.Sprintf("Team %d", i),
		})
		if err != nil {
			b.Fatal(err)
		}
		for j := range appsPerTeam {
			if _, err := st.CreateApplication(ctx, t.ID, fmt.Sprintf("app-%03d", j)); err != nil {
				b.Fatal(err)
			}
		}
		cookie := auth.NewSecret("")
		csrf := make([]byte, 32)
		_, _ = rand.Read(csrf)
		if _, err := st.CreateSession(ctx, store.Session{ID: store.HashToken(cookie), UserID: u.ID, CurrentTeamID: t.ID, CSRFSecret: csrf, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			b.Fatal(err)
		}
		_, token, err := service.CreateToken(ctx, st, service.Actor{TeamID: t.ID, UserID: u.ID, Scopes: auth.AllScopes},
			service.TokenRequest{Name: "bench", Scopes: auth.Strings(auth.AllScopes)}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, caller{cookie: cookie, token: token})
		if i == 0 {
			first = firstOwner{team: t.ID, user: u.ID}
		}
	}
	return out, first
}

// firstOwner is the first team's owner, whose team gets the big application.
type firstOwner struct{ team, user string }
