package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// TestGatewayAddresses keeps each gateway's last report only: a network it
// left is gone, a changed address replaced, and another gateway's rows
// untouched; only fresh rows are listed, in address order.
func TestGatewayAddresses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st := b.ctx, b.st
	id := randomHex(t)
	a, other := "gw-a-"+id, "gw-b-"+id
	n1, n2 := "slw-"+id+"-in1", "slw-"+id+"-in2"
	hour := time.Now().Add(-time.Hour)
	must(t, st.ReportGatewayAddresses(ctx, a, map[string]string{n1: "10.9.0.5", n2: "10.9.1.5"}))
	must(t, st.ReportGatewayAddresses(ctx, other, map[string]string{n1: "10.9.0.3"}))
	list := func(n string) []string {
		got, err := st.GatewayAddresses(ctx, n, hour)
		must(t, err)
		var ips []string
		for _, g := range got {
			ips = append(ips, g.Address)
		}
		return ips
	}
	if got := list(n1); !slices.Equal(got, []string{"10.9.0.3", "10.9.0.5"}) {
		t.Fatalf("on %s: %v", n1, got)
	}
	if got, err := st.GatewayAddresses(ctx, n2, hour); err != nil || !slices.Equal(got, []store.GatewayAddress{{Gateway: a, Address: "10.9.1.5"}}) {
		t.Fatalf("on %s: %+v %v", n2, got, err)
	}
	// a left n2 and got a new address on n1.
	must(t, st.ReportGatewayAddresses(ctx, a, map[string]string{n1: "10.9.0.7"}))
	if got := list(n1); !slices.Equal(got, []string{"10.9.0.3", "10.9.0.7"}) {
		t.Fatalf("on %s after a's new report: %v", n1, got)
	}
	if got := list(n2); len(got) != 0 {
		t.Fatalf("on %s after a left it: %v", n2, got)
	}
	must(t, st.ReportGatewayAddresses(ctx, other, nil))
	if got := list(n1); !slices.Equal(got, []string{"10.9.0.7"}) {
		t.Fatalf("on %s after the other gateway left: %v", n1, got)
	}
	if got, err := st.GatewayAddresses(ctx, n1, time.Now().Add(time.Hour)); err != nil || len(got) != 0 {
		t.Fatalf("since an hour from now: %v %v", got, err)
	}
	if err := st.ReportGatewayAddresses(ctx, a, map[string]string{n1: "not an address"}); err == nil {
		t.Fatal("an invalid address was stored")
	}
}

// TestForgetGateway deletes one gateway's reports and addresses, and
// nothing of another gateway's.
func TestForgetGateway(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st := b.ctx, b.st
	n := "slw-" + randomHex(t) + "-in"
	for _, g := range []string{"gw@node2", "gw@node3"} {
		must(t, st.ReportGateway(ctx, store.GatewayReport{Gateway: g, TableVersion: 4}))
	}
	must(t, st.ReportGatewayAddresses(ctx, "gw@node2", map[string]string{n: "10.9.0.2"}))
	must(t, st.ReportGatewayAddresses(ctx, "gw@node3", map[string]string{n: "10.9.0.3"}))
	must(t, st.ForgetGateway(ctx, "gw@node2"))
	reports, err := st.ListGatewayReports(ctx, time.Now().Add(-time.Hour))
	must(t, err)
	if len(reports) != 1 || reports[0].Gateway != "gw@node3" {
		t.Fatalf("reports after forgetting gw@node2: %+v", reports)
	}
	addrs, err := st.GatewayAddresses(ctx, n, time.Now().Add(-time.Hour))
	must(t, err)
	if !slices.Equal(addrs, []store.GatewayAddress{{Gateway: "gw@node3", Address: "10.9.0.3"}}) {
		t.Fatalf("addresses after forgetting gw@node2: %+v", addrs)
	}
}
