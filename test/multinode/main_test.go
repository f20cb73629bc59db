package multinode_test

import (
	"os"
	"testing"

	"github.com/slipwayhq/slipway/test/multinode/harness"
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Options{Nodes: 3, Managers: 3}))
}
