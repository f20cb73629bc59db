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

// TestRun runs the comparison briefly (about 3 s per target) so make test
// keeps the benchmark working; it checks only that every target answered
// without errors, never the speed.
func TestRun(t *testing.T) {
	var out strings.Builder
	results, err := Run(t.Context(), Options{Duration: 3 * time.Second, Connections: 64, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	for _, r := range results {
		if r.ReqPerS <= 0 || r.Non2xx > 0 {
			t.Errorf("%s: %.0f req/s, %d non-2xx", r.Name, r.ReqPerS, r.Non2xx)
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
	direct, nginx, gw := results[0], results[1], results[2]
	b.ReportMetric(gw.ReqPerS, "gateway-req/s")
	b.ReportMetric(nginx.ReqPerS, "nginx-req/s")
	b.ReportMetric(direct.ReqPerS, "direct-req/s")
	b.ReportMetric(gw.ReqPerS/nginx.ReqPerS, "gateway/nginx")
	b.ReportMetric(float64(gw.P99)/float64(nginx.P99), "p99-gateway/nginx")
	b.ReportMetric(float64(gw.CPUPerRequest())/1e3, "gateway-cpu-us/req")
	b.ReportMetric(float64(nginx.CPUPerRequest())/1e3, "nginx-cpu-us/req")
}
