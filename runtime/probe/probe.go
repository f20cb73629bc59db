package probe

import (
	_ "embed"
	"strconv"
)

// Binary is the static linux/amd64 probe executable.
//
//go:embed probe-linux-amd64
var Binary []byte

// Path is where services find the probe.
const Path = "/run/slipway/probe"

// MaxSize is Swarm's limit on a config's size.
const MaxSize = 1_024_000

// HTTPTest is the health-check test that runs the probe against port and
// path with a per-check timeout in seconds, in Docker's exec form (no shell).
func HTTPTest(port int, path string, timeoutSeconds int) []string {
	return []string{"CMD", Path, "http", "--port", strconv.Itoa(port), "--path", path, "--timeout", strconv.Itoa(timeoutSeconds)}
}
