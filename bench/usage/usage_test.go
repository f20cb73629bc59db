package usage

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
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	rtusage "github.com/slipwayhq/slipway/runtime/usage"
	"github.com/slipwayhq/slipway/sampler"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// servicesPerApp is how many services each simulated application has; each
// application also has one route.
const servicesPerApp = 10

// usageTables are the tables whose growth is measured.
var usageTables = []string{"service_samples", "service_samples_5m", "route_samples", "route_samples_5m"}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// fleet is the simulated team: its applications and the series keys of
// their services and routes.
type fleet struct {
	team, cookie, token string
	appIDs              []string
	services, routes    []store.SeriesKey
}

func BenchmarkUsage(b *testing.B) {
	services := envInt(b, "SLIPWAY_BENCH_USAGE_SERVICES", 500)
	hours := envInt(b, "SLIPWAY_BENCH_USAGE_HOURS", 24)
	requests := envInt(b, "SLIPWAY_BENCH_USAGE_REQUESTS", 200)
	if hours > 24 {
		// Past a day the pruning deletes rows whose space autovacuum
		// reuses later: growth no longer measures a day.
		b.Fatalf("SLIPWAY_BENCH_USAGE_HOURS=%d: at most 24", hours)
	}
	ctx := context.Background()
	st := storetest.NewSchema(b)
	fl := seed(b, ctx, st, services)

	before := tableSizes(b, ctx, st)
	end := time.Now().Truncate(sampler.Interval)
	start := end.Add(-time.Duration(hours) * time.Hour)
	s := &sampler.Sampler{Store: st, Owner: "bench"}
	var writes, cycles []time.Duration
	b.ResetTimer()
	for round, slot := 0, start.Add(sampler.Interval); !slot.After(end); round, slot = round+1, slot.Add(sampler.Interval) {
		svc, rts := fl.round(round)
		t0 := time.Now()
		write(b, ctx, st, fl, slot, svc, rts)
		writes = append(writes, time.Since(t0))
		t0 = time.Now()
		if err := s.Cycle(ctx, slot); err != nil {
			b.Fatalf("sampler cycle %v: %v", slot, err)
		}
		cycles = append(cycles, time.Since(t0))
	}
	b.StopTimer()
	after := tableSizes(b, ctx, st)
	checkRows(b, ctx, st, len(fl.services)*len(writes), len(fl.services)*(hours*12-1))

	// Per service-day (or route-day): the growth over the simulated
	// hours, per series, scaled to 24 h.
	perDay := func(table string, n int) float64 {
		return float64(after[table]-before[table]) / float64(n) * 24 / float64(hours)
	}
	rawSvc, avgSvc := perDay("service_samples", services), perDay("service_samples_5m", services)
	rawRoute, avgRoute := perDay("route_samples", len(fl.routes)), perDay("route_samples_5m", len(fl.routes))
	fmt.Printf("usage: %d services, %d routes, %d h, %d rounds\n", services, len(fl.routes), hours, len(writes))
	fmt.Printf("  write round (%d services + %d routes): mean %v  p99 %v;  sampler cycle (claims, rollups, pruning): mean %v  p99 %v\n",
		services, len(fl.routes), mean(writes), pct(writes, 0.99), mean(cycles), pct(cycles, 0.99))
	fmt.Printf("  bytes per service-day: full resolution %.0f, 5-minute averages %.0f; steady state per service (24 h + 30 d of averages) %.0f\n",
		rawSvc, avgSvc, rawSvc+30*avgSvc)
	fmt.Printf("  bytes per route-day:   full resolution %.0f, 5-minute averages %.0f; steady state per route %.0f\n",
		rawRoute, avgRoute, rawRoute+30*avgRoute)
	b.ReportMetric(ms(mean(writes)), "write-ms/round")
	b.ReportMetric(ms(pct(writes, 0.99)), "write-p99-ms/round")
	b.ReportMetric(ms(pct(cycles, 0.99)), "cycle-p99-ms/round")
	b.ReportMetric(rawSvc, "raw-B/service-day")
	b.ReportMetric(avgSvc, "5m-B/service-day")
	b.ReportMetric(rawSvc+30*avgSvc, "steady-B/service")
	b.ReportMetric(rawRoute+30*avgRoute, "steady-B/route")

	charts(b, st, fl, requests)
}

// charts times the usage partial and the metrics API of the first
// application through the real app handler, and reports their p99.
func charts(b *testing.B, st *store.Store, fl fleet, requests int) {
	f := app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = f.Listener(ln) }()
	defer func() { _ = f.Shutdown() }()
	base := "http://" + ln.Addr().String()
	appID := fl.appIDs[0]
	for _, c := range []struct {
		name, path, want string
		header           [2]string
		cookie           bool
	}{
		{"page-1h", "/applications/" + appID + "/environments/production/usage?range=1h", "<svg", [2]string{"HX-Request", "true"}, true},
		{"page-24h", "/applications/" + appID + "/environments/production/usage?range=24h", "<svg", [2]string{"HX-Request", "true"}, true},
		{"api-1h", "/api/v1/applications/" + appID + "/environments/production/metrics?range=1h", `"points"`, [2]string{"Authorization", "Bearer " + fl.token}, false},
		{"api-24h", "/api/v1/applications/" + appID + "/environments/production/metrics?range=24h", `"points"`, [2]string{"Authorization", "Bearer " + fl.token}, false},
	} {
		var lat []time.Duration
		var size int
		for i := range requests {
			req, _ := http.NewRequest(http.MethodGet, base+c.path, nil)
			req.Header.Set(c.header[0], c.header[1])
			if c.cookie {
				req.AddCookie(&http.Cookie{Name: "slipway_session", Value: fl.cookie})
			}
			t0 := time.Now()
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			lat = append(lat, time.Since(t0))
			if err != nil || res.StatusCode != http.StatusOK {
				b.Fatalf("%s: %d %v: %.300s", c.name, res.StatusCode, err, body)
			}
			if i == 0 && !strings.Contains(string(body), c.want) {
				b.Fatalf("%s: answer without %s: %.300s", c.name, c.want, body)
			}
			size = len(body)
		}
		fmt.Printf("  %-9s %d requests, %6d bytes: p50 %v  p99 %v\n", c.name, requests, size, pct(lat, 0.5), pct(lat, 0.99))
		b.ReportMetric(ms(pct(lat, 0.99)), c.name+"-p99-ms")
	}
}

// seed creates a team with an owner session and a token, and
// applications of servicesPerApp services and one route each.
func seed(b *testing.B, ctx context.Context, st *store.Store, services int) fleet {
	u, t, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{
		Email: "usage@example.com", Password: "correct horse battery", TeamName: "Usage",
	})
	if err != nil {
		b.Fatal(err)
	}
	fl := fleet{team: t.ID, cookie: auth.NewSecret("")}
	csrf := make([]byte, 32)
	_, _ = rand.Read(csrf)
	if _, err := st.CreateSession(ctx, store.Session{ID: store.HashToken(fl.cookie), UserID: u.ID, CurrentTeamID: t.ID, CSRFSecret: csrf, ExpiresAt: time.Now().Add(24 * time.Hour)}); err != nil {
		b.Fatal(err)
	}
	if _, fl.token, err = service.CreateToken(ctx, st, service.Actor{TeamID: t.ID, UserID: u.ID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "bench", Scopes: auth.Strings(auth.AllScopes)}, time.Now()); err != nil {
		b.Fatal(err)
	}
	for i := 0; i*servicesPerApp < services; i++ {
		a, err := st.CreateApplication(ctx, t.ID, fmt.Sprintf("app-%03d", i))
		if err != nil {
			b.Fatal(err)
		}
		env, err := st.CreateEnvironment(ctx, t.ID, store.EnvironmentParams{ApplicationID: a.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production"})
		if err != nil {
			b.Fatal(err)
		}
		fl.appIDs = append(fl.appIDs, a.ID)
		for j := 0; j < servicesPerApp && i*servicesPerApp+j < services; j++ {
			fl.services = append(fl.services, store.SeriesKey{TeamID: t.ID, EnvironmentID: env.ID, Kind: store.SeriesService, Name: fmt.Sprintf("service-%02d", j)})
		}
		fl.routes = append(fl.routes, store.SeriesKey{TeamID: t.ID, EnvironmentID: env.ID, Kind: store.SeriesRoute, Name: fmt.Sprintf("app-%03d.example.com", i)})
	}
	return fl
}

// round makes one slot's samples: every value set and varying, as a busy
// fleet's would be.
func (fl fleet) round(r int) ([]store.ServiceSample, []store.RouteSample) {
	svc := make([]store.ServiceSample, len(fl.services))
	for i := range svc {
		v := float32((r*7+i*13)%100) / 100
		mem := int64(64<<20 + (r*31+i*17)%(64<<20))
		rx, tx := v*1e5, v*3e5
		svc[i] = store.ServiceSample{CPU: &v, Memory: &mem, RX: &rx, TX: &tx, Restarts: int32(i % 3), Tasks: 2, Sampled: 2}
	}
	rts := make([]store.RouteSample, len(fl.routes))
	for i := range rts {
		lat := make([]int32, len(rtusage.LatencyBounds)+1)
		for k := range lat {
			lat[k] = int32((r + i + k*5) % 40)
		}
		rts[i] = store.RouteSample{Requests: int32(100 + (r+i)%400), Errors: int32((r + i) % 5), Latency: lat}
	}
	return svc, rts
}

// write stores a slot as the sampler does (sampler.write): series ids
// looked up (created the first time), then one insert per kind.
func write(b *testing.B, ctx context.Context, st *store.Store, fl fleet, slot time.Time, svc []store.ServiceSample, rts []store.RouteSample) {
	ids, err := st.EnsureMetricSeries(ctx, append(slices.Clone(fl.services), fl.routes...))
	if err != nil {
		b.Fatal(err)
	}
	for i := range svc {
		svc[i].SeriesID = ids[fl.services[i]]
	}
	for i := range rts {
		rts[i].SeriesID = ids[fl.routes[i]]
	}
	if err := st.AddServiceSamples(ctx, slot, svc); err != nil {
		b.Fatal(err)
	}
	if err := st.AddRouteSamples(ctx, slot, rts); err != nil {
		b.Fatal(err)
	}
}

// checkRows fails unless the day's samples are all there and the
// sampler rolled up every finished 5-minute bucket (the last one or two
// are not finished yet), so the sizes measure what they claim.
func checkRows(b *testing.B, ctx context.Context, st *store.Store, raw, minRollups int) {
	var n, m int
	if err := st.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM service_samples), (SELECT count(*) FROM service_samples_5m)`).Scan(&n, &m); err != nil {
		b.Fatal(err)
	}
	if n != raw || m < minRollups {
		b.Fatalf("%d samples and %d 5-minute averages, want %d and at least %d", n, m, raw, minRollups)
	}
}

// tableSizes is each usage table's pg_total_relation_size: heap, indexes
// and TOAST.
func tableSizes(b *testing.B, ctx context.Context, st *store.Store) map[string]int64 {
	out := map[string]int64{}
	for _, t := range usageTables {
		var n int64
		if err := st.Pool().QueryRow(ctx, `SELECT pg_total_relation_size($1::regclass)`, t).Scan(&n); err != nil {
			b.Fatal(err)
		}
		out[t] = n
	}
	return out
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func mean(d []time.Duration) time.Duration {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
