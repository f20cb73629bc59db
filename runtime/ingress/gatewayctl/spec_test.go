package gatewayctl

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/slipwayhq/slipway/runtime/ingress"
)

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want Config
		code string
	}{
		{"defaults", nil, Config{HTTPPort: 80, HTTPSPort: 443, Env: map[string]string{}}, ""},
		{"ports and acme", map[string]string{EnvHTTPPort: "8080", EnvHTTPSPort: "8443", EnvPrivateAddr: "100.64.0.1:80", ingress.EnvACMEEmail: "ops@example.com"},
			Config{HTTPPort: 8080, HTTPSPort: 8443, PrivateAddr: "100.64.0.1:80", Env: map[string]string{ingress.EnvACMEEmail: "ops@example.com"}}, ""},
		{"limits", map[string]string{ingress.EnvMaxBodyBytes: "0", ingress.EnvBodyIdleTimeout: "5", ingress.EnvSendTimeout: "7", ingress.EnvTrustedProxies: "10.0.0.0/8"},
			Config{HTTPPort: 80, HTTPSPort: 443, Env: map[string]string{ingress.EnvMaxBodyBytes: "0", ingress.EnvBodyIdleTimeout: "5", ingress.EnvSendTimeout: "7", ingress.EnvTrustedProxies: "10.0.0.0/8"}}, ""},
		{"bad port", map[string]string{EnvHTTPPort: "eighty"}, Config{}, "gateway_port_invalid"},
		{"bad private addr", map[string]string{EnvPrivateAddr: "100.64.0.1"}, Config{}, "gateway_private_addr_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.code != "" {
				if err == nil || !strings.Contains(err.Error(), tt.code) {
					t.Fatalf("err = %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil || got.HTTPPort != tt.want.HTTPPort || got.HTTPSPort != tt.want.HTTPSPort || got.PrivateAddr != tt.want.PrivateAddr || !maps.Equal(got.Env, tt.want.Env) {
				t.Fatalf("got %+v %v, want %+v", got, err, tt.want)
			}
		})
	}
}

func TestContainerSpec(t *testing.T) {
	t.Parallel()
	cfg := Config{Name: "gw", Image: "img", HTTPPort: 80, HTTPSPort: 443, PrivateAddr: "100.64.0.1:80", SocketDir: "/var/lib/slipway/run"}.withDefaults()
	c, h, err := containerSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		ingress.EnvListenHTTP + "=:80",
		ingress.EnvListenHTTPS + "=:443",
		ingress.EnvListenPrivate + "=:8000",
		ingress.EnvControlSocket + "=/run/slipway/gateway.sock",
		ingress.EnvDataDir + "=/data",
	} {
		if !slices.Contains(c.Env, want) {
			t.Errorf("env %v lacks %s", c.Env, want)
		}
	}
	if b := h.PortBindings["8000/tcp"]; len(b) != 1 || b[0].HostIP != "100.64.0.1" || b[0].HostPort != "80" {
		t.Errorf("private binding %v", b)
	}
	if h.RestartPolicy.Name != container.RestartPolicyUnlessStopped {
		t.Errorf("restart policy %v", h.RestartPolicy)
	}
	if len(h.Mounts) != 2 || h.Mounts[0].Source != "gw-data" || h.Mounts[1].Source != "/var/lib/slipway/run" {
		t.Errorf("mounts %+v", h.Mounts)
	}
	// The hash changes with the image and the configuration, and only then.
	h1, _ := specHash("sha256:a", c, h)
	h2, _ := specHash("sha256:a", c, h)
	h3, _ := specHash("sha256:b", c, h)
	cfg.HTTPPort = 8080
	c4, hc4, _ := containerSpec(cfg)
	h4, _ := specHash("sha256:a", c4, hc4)
	if h1 != h2 || h1 == h3 || h1 == h4 {
		t.Errorf("hashes %s %s %s %s", h1, h2, h3, h4)
	}
}

func TestCheckStatic(t *testing.T) {
	t.Parallel()
	if err := checkStatic([]byte("#!/bin/sh\n")); err == nil || !strings.Contains(err.Error(), "gateway_binary_invalid") {
		t.Fatalf("script: %v", err)
	}
	// Debian's coreutils are dynamically linked.
	ls, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(ls); err == nil || !strings.Contains(err.Error(), "gateway_binary_not_static") {
		t.Fatalf("/bin/ls: %v", err)
	}
}

// TestContainerSpec_Metrics publishes the gateway's metrics listener on
// the configured host address and mounts the token file read-only; the
// token itself never enters the container's environment.
func TestContainerSpec_Metrics(t *testing.T) {
	t.Parallel()
	cfg := Config{Name: "gw", Image: "img", HTTPPort: 80, MetricsAddr: "127.0.0.1:9100", MetricsTokenFile: "/etc/slipway/gw-metrics.token"}.withDefaults()
	c, h, err := containerSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{ingress.EnvMetricsAddr + "=:9100", ingress.EnvMetricsTokenFile + "=" + containerMetricsToken} {
		if !slices.Contains(c.Env, want) {
			t.Errorf("env %v lacks %s", c.Env, want)
		}
	}
	if b := h.PortBindings[metricsPort]; len(b) != 1 || b[0].HostIP != "127.0.0.1" || b[0].HostPort != "9100" {
		t.Errorf("metrics binding %v", b)
	}
	if !slices.ContainsFunc(h.Mounts, func(m mount.Mount) bool {
		return m.Source == cfg.MetricsTokenFile && m.Target == containerMetricsToken && m.ReadOnly
	}) {
		t.Errorf("mounts %+v lack the read-only token file", h.Mounts)
	}
	for _, bad := range []Config{
		{Image: "img", MetricsAddr: "127.0.0.1:9100"},
		{Image: "img", MetricsAddr: "127.0.0.1:9100", MetricsTokenFile: "relative/token"},
		{Image: "img", MetricsAddr: "nine", MetricsTokenFile: "/t"},
	} {
		if _, _, err := containerSpec(bad.withDefaults()); err == nil || !strings.Contains(err.Error(), "gateway_metrics_") {
			t.Errorf("%+v: %v, want a gateway_metrics_* error", bad, err)
		}
	}
}
