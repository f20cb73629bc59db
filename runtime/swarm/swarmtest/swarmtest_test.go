package swarmtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

func TestImage_BuildsOnceAndRunsFromScratch(t *testing.T) {
	t.Parallel()
	cli := swarmtest.Client(t)
	first := swarmtest.Image(t, "web")
	if !strings.HasPrefix(first, "slipway-test/web:") {
		t.Fatalf("tag %q", first)
	}
	second := swarmtest.Image(t, "web")
	if first != second {
		t.Fatalf("same source gave tags %q and %q", first, second)
	}
	inspect, err := cli.ImageInspect(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	if got := inspect.Config.Entrypoint; len(got) != 1 || got[0] != "/app" {
		t.Fatalf("entrypoint %v", got)
	}
	// FROM scratch: one layer, the program.
	if n := len(inspect.RootFS.Layers); n != 1 {
		t.Fatalf("image has %d layers, want 1", n)
	}
}
