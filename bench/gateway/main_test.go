package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play the backend and gateway roles when
// Run re-executes it.
func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		if err := runRole(role); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRun runs the comparison briefly (about 2 s per target and mode) so
// make test keeps the benchmark working; it checks only that every target
// answered in every mode without errors, never the speed.
func TestRun(t *testing.T) {
	var out strings.Builder
	results, err := Run(t.Context(), Options{Duration: 2 * time.Second, Connections: 64, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if len(results) != 9 {
		t.Errorf("%d results, want 3 targets of plain HTTP and 2 of each HTTPS mode", len(results))
	}
	for _, r := range results {
		if r.ReqPerS <= 0 || r.Non2xx > 0 || r.ErrCount > 0 {
			t.Errorf("%s %s: %.0f/s, %d non-2xx, %d errors", r.Mode, r.Name, r.ReqPerS, r.Non2xx, r.ErrCount)
		}
	}
}

// BenchmarkGatewayVsNginx is the full run (20 s per target) for make
// bench; its numbers are reported, not asserted.
func BenchmarkGatewayVsNginx(b *testing.B) {
	var out strings.Builder
	var results []Result
	for b.Loop() {
		var err error
		results, err = Run(b.Context(), Options{Duration: 20 * time.Second, Connections: 64, Rounds: 4, Out: &out})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Log("\n" + out.String())
	// Each mode's last two results are nginx's and the gateway's.
	byMode := map[string][]Result{}
	for _, r := range results {
		byMode[r.Mode] = append(byMode[r.Mode], r)
	}
	for mode, rs := range byMode {
		nginx, gw := rs[len(rs)-2], rs[len(rs)-1]
		b.ReportMetric(gw.ReqPerS, mode+"-gateway/s")
		b.ReportMetric(nginx.ReqPerS, mode+"-nginx/s")
		b.ReportMetric(gw.ReqPerS/nginx.ReqPerS, mode+"-gateway/nginx")
		b.ReportMetric(float64(gw.P99)/float64(nginx.P99), mode+"-p99-gateway/nginx")
		b.ReportMetric(float64(gw.CPUPerRequest())/1e3, mode+"-gateway-cpu-us")
		b.ReportMetric(float64(nginx.CPUPerRequest())/1e3, mode+"-nginx-cpu-us")
	}
}
