package outbound

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Config is a Policy's settings.
type Config struct {
	// Allowed are networks the operator allows although the defaults
	// refuse them ([security] allowed_outbound_networks). They win over
	// every refusal.
	Allowed []netip.Prefix
	// AllowLoopback lets connections reach loopback addresses: slipway
	// dev, whose git servers and registries run on the same machine.
	AllowLoopback bool
	// Lookup resolves a host name; nil uses the system resolver. Tests set
	// it to answer differently from one call to the next (DNS rebinding).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Local lists the networks refused as this host's own: its interface
	// addresses and Docker's networks, which change while the process
	// runs. It is called at most every LocalTTL, and its last good answer
	// is kept when it fails. Nil: only what SetLocal sets.
	Local func(ctx context.Context) ([]netip.Prefix, error)
}

// LocalTTL is how long an answer of Config.Local is used. A Docker
// network created since is refused only once the next answer has it
// (unless it lies in a range refused anyway, as Docker's default pools do).
const LocalTTL = 30 * time.Second

// Policy decides whether a destination address may be connected to. Its
// zero value is not usable; New builds one. A Policy is safe for
// concurrent use.
type Policy struct {
	cfg Config
	// local holds the host's own addresses and Docker's networks, which
	// change while the process runs (SetLocal, Config.Local).
	local atomic.Pointer[[]netip.Prefix]
	// localMu serializes refreshes; localAt is when local was last read.
	localMu sync.Mutex
	localAt time.Time
}

// New returns a policy with cfg. It refuses the host's own addresses and
// Docker's networks only once SetLocal names them.
func New(cfg Config) *Policy {
	p := &Policy{cfg: cfg}
	p.local.Store(&[]netip.Prefix{})
	return p
}

// strict is the policy with no allowance at all, used when a caller gives
// none: fail closed.
var strict = New(Config{})

// OrStrict returns p, or the strict policy when p is nil.
func OrStrict(p *Policy) *Policy {
	if p == nil {
		return strict
	}
	return p
}

// SetLocal replaces the networks refused as this host's own: its
// interface addresses and Docker's networks (see HostAddresses and
// runtime/docker's NetworkPrefixes).
func (p *Policy) SetLocal(prefixes []netip.Prefix) {
	c := append([]netip.Prefix(nil), prefixes...)
	p.local.Store(&c)
}

// Local returns the networks refused as this host's own, refreshed
// from Config.Local when stale.
func (p *Policy) Local() []netip.Prefix { return append([]netip.Prefix(nil), p.localPrefixes()...) }

func (p *Policy) localPrefixes() []netip.Prefix {
	if p.cfg.Local == nil {
		return *p.local.Load()
	}
	p.localMu.Lock()
	defer p.localMu.Unlock()
	if time.Since(p.localAt) < LocalTTL {
		return *p.local.Load()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if prefixes, err := p.cfg.Local(ctx); err == nil {
		p.local.Store(&prefixes)
		p.localAt = time.Now()
	}
	return *p.local.Load()
}

// AllowsLoopback says whether the policy lets connections reach loopback.
func (p *Policy) AllowsLoopback() bool { return p.cfg.AllowLoopback }

// Check returns nil when addr may be connected to, and an *Error saying
// why not otherwise. host is the name as written, for the message.
func (p *Policy) Check(host string, addr netip.Addr) error {
	addr = addr.Unmap()
	if !addr.IsValid() {
		return &Error{Host: host, Address: addr, Reason: "not an IP address"}
	}
	for _, n := range p.cfg.Allowed {
		if n.Contains(addr) {
			return nil
		}
	}
	if addr.IsLoopback() && p.cfg.AllowLoopback {
		return nil
	}
	if reason := refused(addr); reason != "" {
		return &Error{Host: host, Address: addr, Reason: reason}
	}
	for _, n := range p.localPrefixes() {
		if n.Contains(addr) {
			if n.Bits() == addr.BitLen() {
				return &Error{Host: host, Address: addr, Reason: "one of this host's own addresses"}
			}
			return &Error{Host: host, Address: addr, Reason: "in a Docker network of this host (" + n.String() + ")"}
		}
	}
	return nil
}

// special are the ranges refused whatever the host, with why.
var special = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "the unspecified (this-network) range"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address (10.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address (100.64.0.0/10)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (cloud metadata lives at 169.254.169.254)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address (172.16.0.0/12)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address (192.168.0.0/16)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a reserved address (198.18.0.0/15)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address (240.0.0.0/4, broadcast included)"},
	{netip.MustParsePrefix("::/128"), "the unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("fc00::/7"), "a unique-local address (fd00:ec2::254 is cloud metadata)"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
}

// embedders carry an IPv4 address inside an IPv6 one; the IPv4 address is
// checked as if connected to directly (NAT64 and 6to4 gateways forward to it).
var embedders = []struct {
	prefix netip.Prefix
	at     int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
}

// refused says why addr is refused by the built-in rules, or "".
func refused(addr netip.Addr) string {
	for _, s := range special {
		if s.prefix.Contains(addr) {
			return s.reason
		}
	}
	for _, e := range embedders {
		if e.prefix.Contains(addr) {
			b := addr.As16()
			v4 := netip.AddrFrom4([4]byte{b[e.at], b[e.at+1], b[e.at+2], b[e.at+3]})
			if r := refused(v4); r != "" {
				return r + " embedded in " + e.prefix.String()
			}
		}
	}
	return ""
}

// Resolve returns the addresses host resolves to under the policy's
// resolver (an IP literal is its own answer), unchecked.
func (p *Policy) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	return p.lookup(ctx, host)
}

// lookup resolves host with the configured resolver.
func (p *Policy) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if p.cfg.Lookup != nil {
		return p.cfg.Lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// CheckHost resolves host and checks every address it resolves to. It is
// for connections this process does not make itself (the Docker daemon
// pulls images): the daemon resolves again, so a name that changes its
// answer in between is not caught here. Prefer DialContext, which checks
// the address it connects to.
func (p *Policy) CheckHost(ctx context.Context, host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		return p.Check(host, a)
	}
	addrs, err := p.lookup(ctx, host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := p.Check(host, a); err != nil {
			return err
		}
	}
	return nil
}

// HostAddresses returns this host's interface addresses, each as a single
// address prefix, for SetLocal.
func HostAddresses() ([]netip.Prefix, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip, ok := netip.AddrFromSlice(n.IP); ok {
			ip = ip.Unmap()
			out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return out, nil
}
