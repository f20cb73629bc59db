package desync

import (
	"strconv"
	"time"
)

// The gateway settings these tests set, as the environment variables the
// gateway container reads ([ingress] settings in slipway.toml). They are
// spelled out rather than taken from runtime/ingress, so the suite builds
// against a gateway that lacks them (and fails there).
const (
	envTrustedProxies  = "SLIPWAY_GATEWAY_TRUSTED_PROXIES"           // CIDRs, comma-separated
	envMaxBody         = "SLIPWAY_GATEWAY_MAX_BODY_BYTES"            // bytes
	envBodyIdleTimeout = "SLIPWAY_GATEWAY_BODY_IDLE_TIMEOUT_SECONDS" // whole seconds
	envSendTimeout     = "SLIPWAY_GATEWAY_SEND_TIMEOUT_SECONDS"      // whole seconds
)

const (
	// trustedPeer is in [ingress] trusted_proxies; untrustedPeer is not.
	trustedPeer   = "127.0.0.2"
	untrustedPeer = "127.0.0.1"
	// maxBody is the request body limit set for the tests.
	maxBody = 1 << 20
	// bodyIdle is the body idle timeout set for the tests: short, so a
	// stalled body is cut off quickly (whole seconds).
	bodyIdle = time.Second
	// sendTimeout is the send timeout set for the tests (nginx's
	// send_timeout): short, so a client that reads nothing is cut off
	// quickly (whole seconds).
	sendTimeout = time.Second
)

// gatewayEnv configures the gateway under test.
func gatewayEnv() []string {
	return []string{
		envTrustedProxies + "=" + trustedPeer + "/32",
		envMaxBody + "=" + strconv.Itoa(maxBody),
		envBodyIdleTimeout + "=" + strconv.Itoa(int(bodyIdle.Seconds())),
		envSendTimeout + "=" + strconv.Itoa(int(sendTimeout.Seconds())),
	}
}
