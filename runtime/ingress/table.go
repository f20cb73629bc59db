package ingress

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/metrics"
)

// Visibility says which listeners serve a route.
type Visibility string

const (
	// VisibilityPublic routes are served on the public HTTP/HTTPS listeners
	// (and on the private listener too).
	VisibilityPublic Visibility = "public"
	// VisibilityPrivate routes are served only on the private listener.
	VisibilityPrivate Visibility = "private"
)

// Table is one version of the whole route table. The control plane
// publishes it and the gateway serves exactly one Table at a time.
type Table struct {
	Version int64   `json:"version"`
	Routes  []Route `json:"routes"`
	// Networks are ingress overlays the gateways of the ingress nodes
	// join although no route goes there yet: a deployment asks for its
	// environment's before it creates the services routed there, so that
	// they start with every gateway's address. A gateway kept by serve
	// on one node ignores them (the worker joins it itself).
	Networks []string `json:"networks,omitempty"`
}

// Route maps a hostname to a backend service or a redirect. Exactly one of
// Redirect and Backend is set.
type Route struct {
	// Hostname is an exact name ("notes.example.com") or a wildcard one
	// label deep ("*.tenants.example.com"), lowercase without trailing dot.
	Hostname   string     `json:"hostname"`
	Visibility Visibility `json:"visibility"`
	Redirect   *Redirect  `json:"redirect,omitempty"`
	Backend    *Backend   `json:"backend,omitempty"`
	Timeouts   Timeouts   `json:"timeouts,omitzero"`

	// The owners, only used to label metrics and logs.
	TeamID string `json:"team_id,omitempty"`
	AppID  string `json:"app_id,omitempty"`
	EnvID  string `json:"env_id,omitempty"`

	// stats are the route's metric series, set by Proxy.SetTable.
	stats *metrics.GatewayRoute
}

// Redirect is answered by the gateway itself.
type Redirect struct {
	To string `json:"to"`
	// Status is 301, 302, 303, 307 or 308; 0 means 308.
	Status int `json:"status,omitempty"`
	// PreservePath appends the request path and query to To. The manifest
	// defaults it to true; the wire format is explicit.
	PreservePath bool `json:"preserve_path"`
}

// Backend is a Swarm service (endpoint mode dnsrr) on an ingress overlay the
// gateway is connected to.
type Backend struct {
	// Service is the DNS name Docker's embedded DNS resolves to the task
	// addresses on Network.
	Service string `json:"service"`
	Port    int    `json:"port"`
	Network string `json:"network,omitempty"`
}

// Timeouts bound one proxied request. Zero means the gateway's default.
// There is deliberately no total timeout: websockets, server-sent events
// and long downloads must be able to stay open.
type Timeouts struct {
	ConnectMS        int64 `json:"connect_ms,omitempty"`
	ResponseHeaderMS int64 `json:"response_header_ms,omitempty"`
}

const (
	defaultConnectTimeout        = 2 * time.Second
	defaultResponseHeaderTimeout = 60 * time.Second
)

func (t Timeouts) connect() time.Duration {
	if t.ConnectMS > 0 {
		return time.Duration(t.ConnectMS) * time.Millisecond
	}
	return defaultConnectTimeout
}

func (t Timeouts) responseHeader() time.Duration {
	if t.ResponseHeaderMS > 0 {
		return time.Duration(t.ResponseHeaderMS) * time.Millisecond
	}
	return defaultResponseHeaderTimeout
}

// TableError is one problem in a table: the field path, a snake_case code
// and a message.
type TableError struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e TableError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Path, e.Message, e.Code)
}

// TableErrors is every problem found in a table at once.
type TableErrors []TableError

func (es TableErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Validate checks the whole table and returns TableErrors when anything is
// wrong. The gateway refuses a table that does not validate and keeps the
// previous one, so one bad route never takes every route down.
func (t Table) Validate() error {
	var errs TableErrors
	add := func(path, code, format string, args ...any) {
		errs = append(errs, TableError{Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if t.Version < 0 {
		add("version", "table_version_invalid", "version %d must not be negative", t.Version)
	}
	seen := make(map[string]int, len(t.Routes))
	for i, r := range t.Routes {
		p := fmt.Sprintf("routes[%d]", i)
		if err := validHostname(r.Hostname); err != "" {
			add(p+".hostname", "route_hostname_invalid", "hostname %q %s", r.Hostname, err)
		} else if j, dup := seen[r.Hostname]; dup {
			add(p+".hostname", "route_hostname_duplicate", "hostname %q is also routed by routes[%d]", r.Hostname, j)
		} else {
			seen[r.Hostname] = i
		}
		switch r.Visibility {
		case VisibilityPublic, VisibilityPrivate:
		default:
			add(p+".visibility", "route_visibility_invalid", "visibility %q must be public or private", r.Visibility)
		}
		switch {
		case (r.Redirect == nil) == (r.Backend == nil):
			add(p, "route_target_invalid", "a route needs exactly one of redirect and backend")
		case r.Redirect != nil:
			validateRedirect(p+".redirect", r.Redirect, add)
		default:
			if r.Backend.Service == "" {
				add(p+".backend.service", "route_backend_service_missing", "backend service name is empty")
			}
			if r.Backend.Port < 1 || r.Backend.Port > 65535 {
				add(p+".backend.port", "route_backend_port_invalid", "backend port %d must be between 1 and 65535", r.Backend.Port)
			}
		}
		if r.Timeouts.ConnectMS < 0 || r.Timeouts.ResponseHeaderMS < 0 {
			add(p+".timeouts", "route_timeout_invalid", "timeouts must not be negative")
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func validateRedirect(p string, r *Redirect, add func(path, code, format string, args ...any)) {
	switch r.Status {
	case 0, 301, 302, 303, 307, 308:
	default:
		add(p+".status", "route_redirect_status_invalid", "status %d must be 301, 302, 303, 307 or 308", r.Status)
	}
	u, err := url.Parse(r.To)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		add(p+".to", "route_redirect_to_invalid", "to %q must be an http or https URL without query or fragment", r.To)
	}
}

// validHostname returns why h is not a valid route hostname, or "".
func validHostname(h string) string {
	if h == "" {
		return "is empty"
	}
	if len(h) > 253 {
		return "is longer than 253 characters"
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return "needs at least two labels"
	}
	for i, l := range labels {
		if l == "*" && i == 0 {
			if len(labels) < 3 {
				return "wildcard needs at least two labels below it"
			}
			continue
		}
		if l == "" || len(l) > 63 {
			return "has an empty or overlong label"
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "has a label starting or ending with a hyphen"
		}
		for j := 0; j < len(l); j++ {
			c := l[j]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "may only contain lowercase letters, digits, hyphens and dots (* only as the whole first label)"
			}
		}
	}
	return ""
}
