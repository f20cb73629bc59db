package outbound

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestPolicy_Check(t *testing.T) {
	t.Parallel()
	local := []netip.Prefix{netip.MustParsePrefix("203.0.113.7/32"), netip.MustParsePrefix("198.51.100.0/24")}
	tests := []struct {
		name   string
		cfg    Config
		addr   string
		reason string // "" means allowed
	}{
		{"public v4", Config{}, "93.184.216.34", ""},
		{"public v6", Config{}, "2606:2800:220:1::1", ""},
		{"loopback", Config{}, "127.0.0.1", "loopback"},
		{"loopback elsewhere in 127/8", Config{}, "127.5.6.7", "loopback"},
		{"loopback v6", Config{}, "::1", "loopback"},
		{"loopback as mapped v6", Config{}, "::ffff:127.0.0.1", "loopback"},
		{"cloud metadata", Config{}, "169.254.169.254", "link-local"},
		{"cloud metadata v6", Config{}, "fd00:ec2::254", "unique-local"},
		{"link-local v6", Config{}, "fe80::1", "link-local"},
		{"private 10", Config{}, "10.1.2.3", "private"},
		{"private 172.16", Config{}, "172.17.0.1", "private"},
		{"private 192.168", Config{}, "192.168.1.1", "private"},
		{"unique-local", Config{}, "fd12:3456::1", "unique-local"},
		{"cgnat", Config{}, "100.64.0.1", "CGNAT"},
		{"multicast", Config{}, "224.0.0.1", "multicast"},
		{"multicast v6", Config{}, "ff02::1", "multicast"},
		{"unspecified", Config{}, "0.0.0.0", "unspecified"},
		{"unspecified v6", Config{}, "::", "unspecified"},
		{"broadcast", Config{}, "255.255.255.255", "reserved"},
		{"metadata through NAT64", Config{}, "64:ff9b::a9fe:a9fe", "link-local"},
		{"loopback through 6to4", Config{}, "2002:7f00:1::1", "loopback"},
		{"public through NAT64", Config{}, "64:ff9b::5db8:d822", ""},
		{"this host's address", Config{}, "203.0.113.7", "own addresses"},
		{"a Docker network", Config{}, "198.51.100.9", "Docker network"},
		{"loopback allowed in dev", Config{AllowLoopback: true}, "127.0.0.1", ""},
		{"dev allows loopback only", Config{AllowLoopback: true}, "10.0.0.1", "private"},
		{"operator allows a network", Config{Allowed: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}}, "10.20.1.1", ""},
		{"allowance is exact", Config{Allowed: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}}, "10.21.1.1", "private"},
		{"allowance wins over the host", Config{Allowed: []netip.Prefix{netip.MustParsePrefix("203.0.113.7/32")}}, "203.0.113.7", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := New(tt.cfg)
			p.SetLocal(local)
			err := p.Check("example.test", netip.MustParseAddr(tt.addr))
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want allowed", tt.addr, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Reason, tt.reason) {
				t.Fatalf("Check(%s) = %v, want refused as %q", tt.addr, err, tt.reason)
			}
			if msg := err.Error(); !strings.Contains(msg, Code) || !strings.Contains(msg, "example.test") || !strings.Contains(msg, netip.MustParseAddr(tt.addr).Unmap().String()) {
				t.Fatalf("message %q must name the code, the host and the address", msg)
			}
		})
	}
}

func TestWithField(t *testing.T) {
	t.Parallel()
	err := New(Config{}).Check("h", netip.MustParseAddr("127.0.0.1"))
	got := WithField(err, "spec.services[0].source.repository.url")
	if !strings.HasPrefix(got.Error(), "spec.services[0].source.repository.url: destination_not_allowed") {
		t.Fatalf("WithField: %q", got)
	}
	if WithField(errors.New("x"), "f").Error() != "x" {
		t.Fatal("WithField changed an unrelated error")
	}
}

func TestCheckHost(t *testing.T) {
	t.Parallel()
	p := New(Config{Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		// A name with one public and one private address is refused:
		// the daemon may pick either.
		return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.8")}, nil
	}})
	if err := p.CheckHost(context.Background(), "mixed.test"); err == nil || !strings.Contains(err.Error(), "10.0.0.8") {
		t.Fatalf("CheckHost(mixed) = %v, want the private address refused", err)
	}
	if err := p.CheckHost(context.Background(), "169.254.169.254"); err == nil {
		t.Fatal("CheckHost(metadata literal) allowed")
	}
}

// TestPolicy_LocalRefreshed: the host's and Docker's networks come from
// Config.Local, read again once LocalTTL has passed, and the last good
// answer stays when a read fails.
func TestPolicy_LocalRefreshed(t *testing.T) {
	t.Parallel()
	calls := 0
	p := New(Config{Local: func(context.Context) ([]netip.Prefix, error) {
		calls++
		if calls > 1 {
			return nil, errors.New("docker is down")
		}
		return []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}, nil
	}})
	for range 3 {
		if err := p.Check("", netip.MustParseAddr("198.51.100.1")); err == nil {
			t.Fatal("a Docker network's address was allowed")
		}
	}
	if calls != 1 {
		t.Fatalf("Local read %d times within its TTL, want 1", calls)
	}
	p.localAt = p.localAt.Add(-LocalTTL)
	if err := p.Check("", netip.MustParseAddr("198.51.100.1")); err == nil {
		t.Fatal("a failed refresh dropped the last good answer")
	}
}
