package config

import (
	"fmt"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/distribution/reference"
)

// Bounds the validation enforces; exported so callers can quote them.
const (
	MaxTimeoutSeconds = 86_400
	// MinMemoryBytes is Docker's smallest accepted memory limit.
	MinMemoryBytes = 6 << 20
	// MaxCPUMillis is the manifest's own CPU limit bound.
	MaxCPUMillis = 1_048_576
	// MaxReplicas is the manifest's replicas-per-service bound.
	MaxReplicas = 100
)

// Validate checks every value and returns Errors naming each bad key, or
// nil. Load already calls it; it is exported for configurations built in
// code (tests, slipway dev).
func (c Config) Validate() error { return c.validate().orNil() }

func (c Config) validate() Errors {
	var v validator
	if strings.Contains(c.DatabaseURL, "://") {
		// The value may hold a password: never quote it.
		u, err := url.Parse(c.DatabaseURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			v.add("database_url", CodeURLInvalid, "must be a postgres:// or postgresql:// URL, or a keyword/value string such as \"host=/run/postgresql dbname=slipway\"")
		}
	}
	v.hostPort("listen", c.Listen, false)
	if c.Metrics.WorkerListen != "" {
		v.hostPort("metrics.worker_listen", c.Metrics.WorkerListen, false)
	}
	v.httpURL("public_url", c.PublicURL, false)
	if c.DataDir == "" {
		v.add("data_dir", CodeRequired, "must name a directory")
	}
	switch strings.ToLower(c.LogLevel) { // as slog.Level.UnmarshalText reads it
	case "debug", "info", "warn", "error":
	default:
		v.add("log_level", CodeValueInvalid, fmt.Sprintf("must be debug, info, warn or error, got %q", c.LogLevel))
	}

	if id := c.InstallationID; id == "" || len(id) > 63 || strings.Trim(id, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		v.add("installation_id", CodeValueInvalid, fmt.Sprintf("must be 1-63 lowercase letters, digits and hyphens, got %q", id))
	}

	r := c.Reconciliation
	v.intRange("reconciliation.convergence_timeout_seconds", int64(r.ConvergenceTimeoutSeconds), 1, MaxTimeoutSeconds)
	v.intRange("reconciliation.prepare_timeout_seconds", int64(r.PrepareTimeoutSeconds), 1, MaxTimeoutSeconds)
	v.intRange("reconciliation.scan_interval_seconds", int64(r.ScanIntervalSeconds), 1, MaxTimeoutSeconds)

	p := c.Previews
	v.intRange("previews.max_per_application", int64(p.MaxPerApplication), 0, 10_000)
	v.intRange("previews.max_total", int64(p.MaxTotal), 0, 1_000_000)
	if p.MaxPerApplication > p.MaxTotal {
		v.add("previews.max_per_application", CodeConflict, fmt.Sprintf("is %d, more than previews.max_total (%d)", p.MaxPerApplication, p.MaxTotal))
	}
	v.intRange("previews.default_cpu_millis", int64(p.DefaultCPUMillis), 1, MaxCPUMillis)
	v.intRange("previews.default_memory_bytes", p.DefaultMemoryBytes, MinMemoryBytes, 1<<40)
	v.intRange("previews.max_replicas", int64(p.MaxReplicas), 1, MaxReplicas)

	rg := c.Registry
	switch rg.Mode {
	case RegistryAuto, RegistryEmbedded, RegistryExternal, RegistryOff:
	default:
		v.add("registry.mode", CodeValueInvalid, fmt.Sprintf("must be auto, embedded, external or off, got %q", rg.Mode))
	}
	if rg.Mode == RegistryExternal && rg.URL == "" {
		v.add("registry.url", CodeRequired, "mode external needs the registry's url, such as registry.example.com/slipway")
	}
	v.intRange("registry.port", int64(rg.Port), 1, 65535)
	if rg.APIURL != "" {
		v.httpURL("registry.api_url", rg.APIURL, false)
	}

	in := c.Ingress
	v.intRange("ingress.http_port", int64(in.HTTPPort), 1, 65535)
	v.intRange("ingress.https_port", int64(in.HTTPSPort), 0, 65535)
	if in.HTTPPort == in.HTTPSPort {
		v.add("ingress.https_port", CodeConflict, fmt.Sprintf("is the same port as ingress.http_port (%d)", in.HTTPPort))
	}
	// Docker publishes the gateway's listeners on a host IP, not a name.
	for _, a := range []struct{ key, addr string }{{"ingress.private_addr", in.PrivateAddr}, {"ingress.metrics_addr", in.MetricsAddr}} {
		if a.addr == "" {
			continue
		}
		host, _, _ := net.SplitHostPort(a.addr)
		if v.hostPort(a.key, a.addr, true) && net.ParseIP(host) == nil {
			v.add(a.key, CodeAddressInvalid, fmt.Sprintf("must be an IP address and port such as 100.64.0.1:443, got %q", a.addr))
		}
	}
	if in.Image != "" {
		if _, err := reference.ParseNormalizedNamed(in.Image); err != nil {
			v.add("ingress.image", CodeValueInvalid, fmt.Sprintf("must be an image reference such as registry.example.com/slipway:1.2.0 (%v), got %q", err, in.Image))
		}
	}
	v.intRange("ingress.max_body_bytes", in.MaxBodyBytes, 0, 1<<50)
	v.intRange("ingress.body_idle_timeout_seconds", int64(in.BodyIdleTimeoutSeconds), 1, MaxTimeoutSeconds)
	v.intRange("ingress.send_timeout_seconds", int64(in.SendTimeoutSeconds), 1, MaxTimeoutSeconds)
	for i, p := range in.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err == nil {
			continue
		}
		if _, err := netip.ParseAddr(p); err != nil {
			v.add(fmt.Sprintf("ingress.trusted_proxies[%d]", i), CodeAddressInvalid, fmt.Sprintf("must be a CIDR such as 10.0.0.0/8 or an IP address, got %q", p))
		}
	}
	v.httpURL("ingress.acme.directory", in.ACME.Directory, false)
	if e := in.ACME.Email; e != "" {
		if a, err := mail.ParseAddress(e); err != nil || a.Address != e {
			v.add("ingress.acme.email", CodeValueInvalid, fmt.Sprintf("must be a bare email address such as ops@example.com, got %q", e))
		}
	}

	g := c.GitHub
	v.httpURL("github.api_url", g.APIURL, true)
	v.intRange("github.app_id", g.AppID, 0, 1<<53)
	if g.AppID > 0 {
		if g.PrivateKeyFile == "" {
			v.add("github.private_key_file", CodeRequired, "is required when github.app_id is set")
		}
		if g.WebhookSecretFile == "" {
			v.add("github.webhook_secret_file", CodeRequired, "is required when github.app_id is set")
		}
	}
	if g.AppSlug != "" && strings.Trim(g.AppSlug, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		v.add("github.app_slug", CodeValueInvalid, fmt.Sprintf("must be the App's URL name: lowercase letters, digits and hyphens, got %q", g.AppSlug))
	}

	if in := c.Ingress; in.GatewayTokenFile != "" && in.GatewayToken != "" {
		v.add("ingress.gateway_token", CodeConflict, "set ingress.gateway_token_file or ingress.gateway_token, not both")
	} else if in.FeedAddr != "" && in.GatewayTokenFile == "" && in.GatewayToken == "" {
		v.add("ingress.gateway_token_file", CodeRequired, "is required when ingress.feed_addr is set: the TCP feed hands out every route")
	}
	if in := c.Ingress; in.MetricsAddr != "" && !filepath.IsAbs(in.MetricsTokenFile) {
		v.add("ingress.metrics_token_file", CodeRequired, "must be an absolute path when ingress.metrics_addr is set: scrapes of the gateway's metrics need a token")
	}
	if c.Metrics.TokenFile != "" && c.Metrics.Token != "" {
		v.add("metrics.token", CodeConflict, "set metrics.token_file or metrics.token, not both")
	}
	v.httpURL("telemetry.otlp_endpoint", c.Telemetry.OTLPEndpoint, false)
	v.intRange("telemetry.metrics_interval_seconds", int64(c.Telemetry.MetricsIntervalSeconds), 1, MaxTimeoutSeconds)
	v.intRange("worker.deploy_concurrency", int64(c.Worker.DeployConcurrency), 1, 256)
	v.intRange("worker.usage_sample_seconds", int64(c.Worker.UsageSampleSeconds), 1, 15)
	for i, cidr := range c.Security.AllowedOutboundNetworks {
		if _, err := netip.ParsePrefix(cidr); err != nil {
			v.add("security.allowed_outbound_networks", CodeValueInvalid, fmt.Sprintf("item %d must be a network in CIDR form such as 10.20.0.0/16, got %q", i, cidr))
		}
	}
	v.intRange("containers.pids_limit", c.Containers.PidsLimit, 16, 1<<22)
	v.intRange("containers.default_memory_bytes", c.Containers.DefaultMemoryBytes, MinMemoryBytes, 1<<40)
	q := c.Quotas
	for _, l := range []struct {
		key    string
		n, min int64
	}{
		{"quotas.applications", int64(q.Applications), 0}, {"quotas.environments", int64(q.Environments), 0},
		{"quotas.previews", int64(q.Previews), 0}, {"quotas.replicas", int64(q.Replicas), 0},
		{"quotas.cpu_millis", q.CPUMillis, 0}, {"quotas.memory_bytes", q.MemoryBytes, 0},
		{"quotas.volumes", int64(q.Volumes), 0}, {"quotas.secrets", int64(q.Secrets), 0},
		{"quotas.concurrent_builds", int64(q.ConcurrentBuilds), 1}, {"quotas.concurrent_deployments", int64(q.ConcurrentDeployments), 1},
	} {
		v.intRange(l.key, l.n, l.min, 1<<50)
	}
	return v.errs
}

type validator struct{ errs Errors }

func (v *validator) add(key, code, msg string) {
	v.errs = append(v.errs, &Error{Key: key, Code: code, Message: msg})
}

func (v *validator) intRange(key string, n, lo, hi int64) {
	if n < lo || n > hi {
		v.add(key, CodeOutOfRange, fmt.Sprintf("must be between %d and %d, got %d", lo, hi, n))
	}
}

// httpURL checks an absolute http(s) URL without query or fragment.
func (v *validator) httpURL(key, s string, required bool) {
	if s == "" {
		if required {
			v.add(key, CodeRequired, "must be an http:// or https:// URL")
		}
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		v.add(key, CodeURLInvalid, fmt.Sprintf("must be an absolute http:// or https:// URL without credentials, query or fragment, got %q", s))
	}
}

// hostPort checks host:port with a numeric port (0 only when !nonZero, for
// listeners tests bind to a random port) and reports whether it is valid.
func (v *validator) hostPort(key, s string, nonZero bool) bool {
	_, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	lo := 0
	if nonZero {
		lo = 1
	}
	if err != nil || perr != nil || n < lo || n > 65535 {
		v.add(key, CodeAddressInvalid, fmt.Sprintf("must be host:port with a port from %d to 65535, such as 127.0.0.1:8080, got %q", lo, s))
		return false
	}
	return true
}
