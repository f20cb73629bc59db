package gatewayctl

import (
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"

	"github.com/slipwayhq/slipway/runtime/ingress"
)

// TestContainerSpec_HostCertificatePaths: the ACME server's root and the
// operator certificate directory, given as host paths, are mounted
// read-only and the gateway is pointed at the mounted copies; a relative
// path is refused with a code.
func TestContainerSpec_HostCertificatePaths(t *testing.T) {
	t.Parallel()
	env := map[string]string{ingress.EnvACMECARoot: "/etc/acme/root.pem", ingress.EnvCertDir: "/srv/certs", ingress.EnvACMEEmail: "ops@example.com"}
	cfg := Config{Name: "gw", Image: "img", HTTPPort: 80, HTTPSPort: 443, Env: env}.withDefaults()
	c, h, err := containerSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		ingress.EnvACMECARoot + "=" + containerACMECARoot,
		ingress.EnvCertDir + "=" + containerCertDir,
		ingress.EnvACMEEmail + "=ops@example.com",
	} {
		if !slices.Contains(c.Env, want) {
			t.Errorf("env %v lacks %s", c.Env, want)
		}
	}
	for _, want := range []mount.Mount{
		{Type: mount.TypeBind, Source: "/etc/acme/root.pem", Target: containerACMECARoot, ReadOnly: true},
		{Type: mount.TypeBind, Source: "/srv/certs", Target: containerCertDir, ReadOnly: true},
	} {
		if !slices.Contains(h.Mounts, want) {
			t.Errorf("mounts %+v lack %+v", h.Mounts, want)
		}
	}
	if env[ingress.EnvACMECARoot] != "/etc/acme/root.pem" {
		t.Errorf("containerSpec changed the caller's Env: %v", env)
	}

	for name, code := range map[string]string{ingress.EnvACMECARoot: "gateway_acme_ca_root_invalid", ingress.EnvCertDir: "gateway_cert_dir_invalid"} {
		cfg := Config{Name: "gw", Image: "img", Env: map[string]string{name: "certs/x"}}.withDefaults()
		if _, _, err := containerSpec(cfg); err == nil || !strings.Contains(err.Error(), code) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s relative: err = %v, want %s", name, err, code)
		}
	}
}
