package swarm_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain raises test parallelism: the real-Swarm tests spend their time
// waiting for Swarm (health checks, monitor windows, stop grace periods),
// not on CPU, so running more of them at once than GOMAXPROCS keeps the
// package's wall time low. An explicit -parallel wins.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", "5")
	}
	os.Exit(m.Run())
}
