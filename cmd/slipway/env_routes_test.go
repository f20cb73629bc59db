package main

import (
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/api"
)

func TestCertificateCell(t *testing.T) {
	t.Parallel()
	exp := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	long := "urn:ietf:params:acme:error:dns - DNS problem: NXDOMAIN looking up A for shop.example.com - check that a DNS record exists for this domain"
	for _, tt := range []struct {
		in   api.RouteTLS
		want string
	}{
		{api.RouteTLS{State: "issued", ExpiresAt: &exp}, "issued (expires 2027-03-01)"},
		{api.RouteTLS{State: "operator", ExpiresAt: &exp}, "operator (expires 2027-03-01)"},
		{api.RouteTLS{State: "pending"}, "pending"},
		{api.RouteTLS{State: "failed", LastError: "connection\nrefused"}, "failed: connection refused"},
		{api.RouteTLS{State: "failed", LastError: long}, "failed: " + long[:77] + "..."},
	} {
		if got := certificateCell(tt.in); got != tt.want {
			t.Errorf("certificateCell(%+v) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(certificateCell(tt.in), "\n") {
			t.Errorf("cell has a line break")
		}
	}
}
