package sampler_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/sampler"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// slot0 is a slot boundary the tests start from.
var slot0 = time.Now().Truncate(sampler.Interval).Add(-time.Hour)

// TestSampler_SamplesRunningServices deploys a service on the real Swarm
// and samples it twice: the second slot has its tasks, memory and a CPU
// rate (which needs two readings), and the series API reads it back.
func TestSampler_SamplesRunningServices(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	web, worker := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	d := b.Deploy(t, pipelinetest.WebManifest(b.App.Name, web, worker, ""))
	pipelinetest.ExpectState(t, d, store.StateSucceeded)

	ctx := context.Background()
	s := &sampler.Sampler{Store: b.Store, Engine: swarmtest.Client(t), Owner: "test"}
	if err := s.Cycle(ctx, slot0); err != nil {
		t.Fatalf("first cycle: %v", err)
	}
	if err := s.Cycle(ctx, slot0.Add(sampler.Interval)); err != nil {
		t.Fatalf("second cycle: %v", err)
	}
	series, err := sampler.Read(ctx, b.Store, b.Team.ID, b.Env.ID, sampler.Ranges[0], slot0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]sampler.ServiceSeries{}
	for _, s := range series.Services {
		byName[s.Name] = s
	}
	webSeries := byName["web"]
	if len(webSeries.Points) != 2 || len(byName["worker"].Points) != 2 {
		t.Fatalf("series %+v, want two points of web and worker", series.Services)
	}
	first, second := webSeries.Points[0], webSeries.Points[1]
	if first.Tasks != 2 || first.Sampled != 2 || first.Memory == nil || *first.Memory <= 0 {
		t.Fatalf("first web point %+v: want 2 tasks sampled with memory", first)
	}
	if first.CPU != nil {
		t.Fatalf("first point has a CPU rate %v without an earlier reading", *first.CPU)
	}
	if second.CPU == nil || *second.CPU < 0 || second.RX == nil || second.TX == nil {
		t.Fatalf("second web point %+v: want CPU and network rates", second)
	}
	// A slot sampled again is not counted twice.
	if err := s.Cycle(ctx, slot0.Add(sampler.Interval)); err != nil {
		t.Fatal(err)
	}
	again, _ := sampler.Read(ctx, b.Store, b.Team.ID, b.Env.ID, sampler.Ranges[0], slot0.Add(time.Minute))
	for _, s := range again.Services {
		if s.Name == "web" && s.Points[1].Sampled != 2 {
			t.Fatalf("slot sampled twice: %+v", s.Points[1])
		}
	}
}

// TestSampler_RoutesAndRollups reads a gateway's /metrics (the real
// metrics registry behind its bearer token) between two slots, and rolls
// the samples into 5-minute buckets, deleting what is past retention.
func TestSampler_RoutesAndRollups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	tn := storetest.NewTenant(t, st, "acme", "shop")
	if err := st.SetEnvironmentRoutes(ctx, tn.Team.ID, tn.Env.ID, []store.DeployedRoute{{
		DeploymentID: "dep_1", Hostname: "shop.example.com", Visibility: "public", Service: "web",
		BackendService: "slw-x-web", BackendPort: 8080,
	}}); err != nil {
		t.Fatal(err)
	}
	reg := metrics.New(nil)
	gw := httptest.NewServer(reg.Handler("gw-token"))
	t.Cleanup(gw.Close)
	s := &sampler.Sampler{Store: st, Owner: "test", Gateway: &sampler.Gateway{URL: gw.URL + "/metrics", Token: "gw-token", Client: http.DefaultClient}}

	route := reg.GatewayRoute("shop.example.com")
	route.Observe(200, 3*time.Millisecond) // before the first scrape: not counted
	if err := s.Cycle(ctx, slot0); err != nil {
		t.Fatal(err)
	}
	for range 90 {
		route.Observe(200, 20*time.Millisecond)
	}
	for range 10 {
		route.Observe(503, 800*time.Millisecond)
	}
	reg.GatewayRoute("other.example.com").Observe(200, time.Millisecond) // nobody's route
	if err := s.Cycle(ctx, slot0.Add(sampler.Interval)); err != nil {
		t.Fatal(err)
	}
	series, err := sampler.Read(ctx, st, tn.Team.ID, tn.Env.ID, sampler.Ranges[0], slot0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(series.Routes) != 1 || series.Routes[0].Hostname != "shop.example.com" || len(series.Routes[0].Points) != 1 {
		t.Fatalf("routes %+v", series.Routes)
	}
	p := series.Routes[0].Points[0]
	if p.Requests != 100 || p.Errors != 10 || p.ErrorRate == nil || *p.ErrorRate != 0.1 {
		t.Fatalf("route point %+v: want 100 requests, 10 errors", p)
	}
	// 95 % of answers: 90 at 20 ms and 5 of the 10 at 800 ms, which the
	// histogram puts in (0.5 s, 1 s].
	if p.P95 == nil || *p.P95 < 500 || *p.P95 > 1000 {
		t.Fatalf("p95 %v ms, want within (500, 1000]", p.P95)
	}

	// Rollups: service samples over ten minutes, then a slot past the
	// second bucket's end rolls both up.
	ids, err := st.EnsureMetricSeries(ctx, []store.SeriesKey{{TeamID: tn.Team.ID, EnvironmentID: tn.Env.ID, Kind: store.SeriesService, Name: "web"}})
	if err != nil {
		t.Fatal(err)
	}
	id := ids[store.SeriesKey{TeamID: tn.Team.ID, EnvironmentID: tn.Env.ID, Kind: store.SeriesService, Name: "web"}]
	base := slot0.Truncate(sampler.RollupStep).Add(sampler.RollupStep)
	for i := range 40 {
		cpu := float32(i % 20) // 0..19 in each 5-minute bucket: average 9.5
		if err := st.AddServiceSamples(ctx, base.Add(time.Duration(i)*sampler.Interval), []store.ServiceSample{{SeriesID: id, CPU: &cpu, Tasks: 1, Sampled: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	old := float32(1)
	if err := st.AddServiceSamples(ctx, slot0.Add(-48*time.Hour), []store.ServiceSample{{SeriesID: id, CPU: &old}}); err != nil {
		t.Fatal(err)
	}
	s2 := &sampler.Sampler{Store: st, Owner: "test"}
	for _, slot := range []time.Time{base.Add(5*time.Minute + time.Minute), base.Add(10*time.Minute + time.Minute)} {
		if err := s2.Cycle(ctx, slot); err != nil {
			t.Fatal(err)
		}
	}
	day, err := sampler.Read(ctx, st, tn.Team.ID, tn.Env.ID, sampler.Ranges[2], base.Add(10*time.Minute+time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var cpus []float64
	for _, sv := range day.Services {
		for _, p := range sv.Points {
			if p.At.Before(base.Add(10 * time.Minute)) {
				cpus = append(cpus, *p.CPU)
			}
		}
	}
	if len(cpus) != 2 || cpus[0] != 9.5 || cpus[1] != 9.5 {
		t.Fatalf("5-minute averages %v, want [9.5 9.5]", cpus)
	}
	var n int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM service_samples WHERE at < $1`, slot0.Add(-24*time.Hour)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d samples older than a day remain (%v)", n, err)
	}
}

// TestSampler_FollowsHealth: a service unhealthy for longer than a
// destination's N minutes is told once; its recovery is told where the
// outage was.
func TestSampler_FollowsHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	tn := storetest.NewTenant(t, st, "acme", "shop")
	var queued []string
	emitter := &notify.Emitter{Enqueue: func(_ context.Context, _ *store.Store, _, id string) error {
		queued = append(queued, id)
		return nil
	}}
	svc := &notify.Service{Store: st, Keyring: testKeyring(t), Emitter: emitter}
	url, kind := "https://hooks.example.com/a", notify.KindSlack
	for name, minutes := range map[string]int{"fast": 1, "slow": 10} {
		if _, _, err := svc.Create(ctx, tn.Team.ID, notify.Input{Name: &name, Kind: &kind, URL: &url, UnhealthyMinutes: &minutes,
			Events: &[]string{"service.unhealthy", "service.recovered"}}); err != nil {
			t.Fatal(err)
		}
	}
	s := &sampler.Sampler{Store: st, Owner: "test", Notify: emitter}
	steps := []struct {
		at      time.Duration
		healthy bool
		queued  int
	}{
		{0, false, 0},
		{30 * time.Second, false, 0},
		{2 * time.Minute, false, 1},  // fast's minute passed
		{3 * time.Minute, false, 1},  // told once
		{4 * time.Minute, true, 2},   // fast hears of the recovery; slow heard nothing
		{5 * time.Minute, true, 2},   // healthy stays quiet
		{6 * time.Minute, false, 2},  // a new episode starts
		{20 * time.Minute, false, 4}, // both thresholds passed
	}
	for _, step := range steps {
		if err := s.FollowHealth(ctx, slot0.Add(step.at), tn.Team.ID, tn.Env.ID, "web", step.healthy); err != nil {
			t.Fatal(err)
		}
		if len(queued) != step.queued {
			t.Fatalf("at +%s: %d deliveries queued, want %d", step.at, len(queued), step.queued)
		}
	}
}

func testKeyring(t *testing.T) *keyring.Keyring {
	t.Helper()
	key, err := keyring.NewKey(bytes.Repeat([]byte{5}, keyring.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return keyring.New(key)
}
