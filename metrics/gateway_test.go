package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestGatewayRoute_SharesSeries records through pre-resolved handles into
// the same series ObserveGatewayRequest uses, with the same host limit,
// and without allocating once a status code was seen.
func TestGatewayRoute_SharesSeries(t *testing.T) {
	r := New(nil)
	r.hosts.max = 2
	a := r.GatewayRoute("a.example.com")
	if again := r.GatewayRoute("a.example.com"); again != a {
		t.Error("a second table got another handle for the same host")
	}
	a.Observe(200, time.Millisecond)
	a.Observe(200, time.Millisecond)
	a.Observe(502, time.Second)
	a.Observe(0, time.Millisecond)
	r.GatewayRoute("").Observe(404, time.Millisecond)
	r.GatewayRoute("b.example.com")
	r.GatewayRoute("c.example.com").Observe(200, time.Millisecond) // past the limit
	r.ObserveGatewayRequest("a.example.com", 200, time.Millisecond)
	var none *GatewayRoute
	none.Observe(200, time.Millisecond)
	if (*Registry)(nil).GatewayRoute("x") != nil {
		t.Error("nil registry returned a handle")
	}

	err := testutil.CollectAndCompare(r.gatewayRequests, strings.NewReader(`
# HELP slipway_gateway_requests_total Requests the gateway answered, by route hostname and status code.
# TYPE slipway_gateway_requests_total counter
slipway_gateway_requests_total{host="a.example.com",status="200"} 3
slipway_gateway_requests_total{host="a.example.com",status="502"} 1
slipway_gateway_requests_total{host="a.example.com",status="other"} 1
slipway_gateway_requests_total{host="other",status="200"} 1
slipway_gateway_requests_total{host="unmatched",status="404"} 1
`))
	if err != nil {
		t.Error(err)
	}
	if n := testing.AllocsPerRun(100, func() { a.Observe(200, time.Millisecond) }); n != 0 {
		t.Errorf("Observe allocates %v times per request", n)
	}
}

func BenchmarkGatewayRoute_Observe(b *testing.B) {
	g := New(nil).GatewayRoute("app.example.com")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			g.Observe(200, time.Millisecond)
		}
	})
}
