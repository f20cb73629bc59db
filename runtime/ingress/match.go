package ingress

import "strings"

// Matcher finds the route for a request's Host. It is built once per table
// and read concurrently without locks.
type Matcher struct {
	exact    map[string]*Route
	wildcard map[string]*Route // keyed by the part after "*."
}

// NewMatcher indexes a (validated) table.
func NewMatcher(t *Table) *Matcher {
	m := &Matcher{exact: map[string]*Route{}, wildcard: map[string]*Route{}}
	for i := range t.Routes {
		r := &t.Routes[i]
		if suffix, ok := strings.CutPrefix(r.Hostname, "*."); ok {
			m.wildcard[suffix] = r
		} else {
			m.exact[r.Hostname] = r
		}
	}
	return m
}

// Match returns the route serving host (a Host header or SNI name: any case,
// optional port, optional trailing dot), or nil. An exact route wins over a
// wildcard, and a wildcard covers exactly one label.
func (m *Matcher) Match(host string) *Route {
	h := NormalizeHost(host)
	if h == "" {
		return nil
	}
	if r := m.exact[h]; r != nil {
		return r
	}
	dot := strings.IndexByte(h, '.')
	if dot <= 0 {
		return nil
	}
	return m.wildcard[h[dot+1:]]
}

// NormalizeHost lowercases host and strips a port and a trailing dot. It
// allocates only when host has upper-case letters, which is rare, because
// it runs on every request.
func NormalizeHost(host string) string {
	if strings.HasPrefix(host, "[") {
		// An IPv6 literal never names a route.
		return ""
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	host = strings.TrimSuffix(host, ".")
	for i := 0; i < len(host); i++ {
		if c := host[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(host)
		}
	}
	return host
}
