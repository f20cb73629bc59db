package gatewayctl

import (
	"fmt"
	"path"

	"github.com/docker/docker/api/types/mount"

	"github.com/slipwayhq/slipway/runtime/ingress"
)

// Where the host files named by the gateway's certificate settings are
// mounted in the container (outside /run/slipway, like the metrics token).
const (
	containerACMECARoot = "/etc/slipway-gateway/acme-ca-root.pem"
	containerCertDir    = "/etc/slipway-gateway/certs"
)

// hostPathMounts bind-mounts, read-only, the host paths that env gives for
// the ACME server's root (SLIPWAY_ACME_CA_ROOT) and the operator
// certificates (SLIPWAY_GATEWAY_CERT_DIR), and points those variables at
// the mounted copies: the gateway reads them inside its container, where
// the host's paths do not exist.
func hostPathMounts(env map[string]string) ([]mount.Mount, error) {
	var mounts []mount.Mount
	for _, p := range []struct{ env, target, code string }{
		{ingress.EnvACMECARoot, containerACMECARoot, "gateway_acme_ca_root_invalid"},
		{ingress.EnvCertDir, containerCertDir, "gateway_cert_dir_invalid"},
	} {
		src := env[p.env]
		if src == "" {
			continue
		}
		if !path.IsAbs(src) {
			return nil, fmt.Errorf("%s=%q: must be an absolute host path (%s)", p.env, src, p.code)
		}
		env[p.env] = p.target
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: src, Target: p.target, ReadOnly: true})
	}
	return mounts, nil
}
