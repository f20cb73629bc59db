package ingress

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestParseLimits(t *testing.T) {
	t.Parallel()
	l, err := ParseLimits("0", "5", "7", " 10.0.0.0/8, 192.168.1.5 ,::1")
	if err != nil {
		t.Fatal(err)
	}
	if l.maxBody() != -1 || l.bodyTooLarge(1<<40) || l.bodyIdle() != 5*time.Second || l.send() != 7*time.Second {
		t.Fatalf("limits %+v: max body %d, idle %s, send %s", l, l.maxBody(), l.bodyIdle(), l.send())
	}
	for _, peer := range []string{"10.1.2.3", "192.168.1.5", "::1", "::ffff:10.0.0.1"} {
		if !l.trusts(netip.MustParseAddr(peer).Unmap()) {
			t.Errorf("%s not trusted", peer)
		}
	}
	if l.trusts(netip.MustParseAddr("192.168.1.6")) {
		t.Error("192.168.1.6 trusted")
	}
	var zero Limits
	if zero.maxBody() != DefaultMaxBodyBytes || !zero.bodyTooLarge(DefaultMaxBodyBytes+1) || zero.bodyTooLarge(-1) || zero.bodyIdle() != DefaultBodyIdleTimeout || zero.send() != DefaultSendTimeout {
		t.Fatalf("zero Limits: max %d idle %s send %s", zero.maxBody(), zero.bodyIdle(), zero.send())
	}
	for _, bad := range [][4]string{{"-1", "", "", ""}, {"x", "", "", ""}, {"", "0", "", ""}, {"", "1.5", "", ""}, {"", "", "0", ""}, {"", "", "x", ""},
		{"", "", "", "10.0.0.0/33"}, {"", "", "", "example.com"}} {
		if _, err := ParseLimits(bad[0], bad[1], bad[2], bad[3]); err == nil || !strings.Contains(err.Error(), "_invalid") {
			t.Errorf("ParseLimits(%q) = %v, want an error with its code", bad, err)
		}
	}
}

func TestRequestFieldRule(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name             string
		untrusted, trust fieldRule
	}{
		{"Accept", fieldPass, fieldPass},
		{"content-length", fieldPass, fieldPass},
		{"Connection", fieldDrop, fieldDrop},
		{"TE", fieldDrop, fieldDrop},
		{"Proxy-Authorization", fieldDrop, fieldDrop},
		{"Expect", fieldDrop, fieldDrop},
		{"X-Forwarded-For", fieldDrop, fieldPriorFor},
		{"x-forwarded-proto", fieldDrop, fieldPriorProto},
		{"X-Forwarded-Host", fieldDrop, fieldDrop},
		{"X-Forwarded-Port", fieldDrop, fieldPass},
		{"X-Forwarded-Prefix", fieldDrop, fieldPass},
		{"Forwarded", fieldDrop, fieldPass},
		{"X-REAL-IP", fieldDrop, fieldDrop},
		{"True-Client-IP", fieldDrop, fieldPass},
		{"CF-Connecting-IP", fieldDrop, fieldPass},
		{"X-Original-Forwarded-For", fieldDrop, fieldPass},
	} {
		if got := requestFieldRule(tt.name, false); got != tt.untrusted {
			t.Errorf("%s from an untrusted peer: %d, want %d", tt.name, got, tt.untrusted)
		}
		if got := requestFieldRule([]byte(tt.name), true); got != tt.trust {
			t.Errorf("%s from a trusted peer: %d, want %d", tt.name, got, tt.trust)
		}
	}
}

func TestForwarding(t *testing.T) {
	t.Parallel()
	limits := &Limits{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	peer := netip.MustParseAddr("10.0.0.9")
	for _, tt := range []struct {
		name         string
		trusted      bool
		https        bool
		prior, proto string
		want         string
	}{
		{"untrusted", false, false, "", "", "X-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Host: app.example.com\r\nX-Forwarded-Proto: http\r\nX-Real-IP: 10.0.0.9\r\n"},
		{"untrusted over TLS", false, true, "", "", "X-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Host: app.example.com\r\nX-Forwarded-Proto: https\r\nX-Real-IP: 10.0.0.9\r\n"},
		{"trusted, a chain", true, false, "203.0.113.7, 10.1.1.1", "HTTPS",
			"X-Forwarded-For: 203.0.113.7, 10.1.1.1, 10.0.0.9\r\nX-Forwarded-Host: app.example.com\r\nX-Forwarded-Proto: https\r\nX-Real-IP: 203.0.113.7\r\n"},
		{"trusted, garbage in the chain", true, false, "203.0.113.7, junk, 10.1.1.1", "gopher",
			"X-Forwarded-For: 203.0.113.7, junk, 10.1.1.1, 10.0.0.9\r\nX-Forwarded-Host: app.example.com\r\nX-Forwarded-Proto: http\r\nX-Real-IP: 10.1.1.1\r\n"},
		{"trusted, nothing before it", true, true, "", "", "X-Forwarded-For: 10.0.0.9\r\nX-Forwarded-Host: app.example.com\r\nX-Forwarded-Proto: https\r\nX-Real-IP: 10.0.0.9\r\n"},
	} {
		fw := forwarding{peer: peer, https: tt.https}
		if tt.trusted {
			fw.limits = limits
			if tt.prior != "" {
				fw.note(fieldPriorFor, []byte(tt.prior))
			}
			if tt.proto != "" {
				fw.note(fieldPriorProto, []byte(tt.proto))
			}
		}
		if got := string(appendForwarding(nil, &fw, "app.example.com")); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
