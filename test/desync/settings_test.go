package desync

import "time"

// The gateway settings these tests set, as the environment variables the
// gateway container reads ([ingress] settings in slipway.toml).
const (
	envTrustedProxies  = "SLIPWAY_GATEWAY_TRUSTED_PROXIES"
	envMaxBody         = "SLIPWAY_GATEWAY_MAX_BODY_BYTES"
	envBodyIdleTimeout = "SLIPWAY_GATEWAY_BODY_IDLE_TIMEOUT"
)

const (
	// trustedPeer is in [ingress] trusted_proxies; untrustedPeer is not.
	trustedPeer   = "127.0.0.2"
	untrustedPeer = "127.0.0.1"
	// maxBody is the request body limit set for the tests.
	maxBody = 1 << 20
	// bodyIdle is the body idle timeout set for the tests: short, so a
	// stalled body is cut off quickly.
	bodyIdle = time.Second
)

// gatewayEnv configures the gateway under test.
func gatewayEnv() []string {
	return []string{
		envTrustedProxies + "=" + trustedPeer + "/32",
		envMaxBody + "=1048576",
		envBodyIdleTimeout + "=1s",
	}
}
