package leftovers

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	slwswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/multinode/harness"
	"github.com/slipwayhq/slipway/test/summary"
)

const (
	// EnvSince is the run's start, in Unix seconds.
	EnvSince = "SLIPWAY_LEFTOVERS_SINCE"
	// EnvMode "fail" fails the test when anything is left.
	EnvMode = "SLIPWAY_LEFTOVERS"
)

// madeSince keeps the objects made at or after since.
// (A volume whose creation time the engine does not say counts.)
func madeSince(all []swarmtest.Object, since time.Time) []swarmtest.Object {
	return slices.DeleteFunc(slices.Clone(all), func(o swarmtest.Object) bool {
		return !o.Created.IsZero() && o.Created.Before(since)
	})
}

func TestNothingLeftByTheRun(t *testing.T) {
	raw := os.Getenv(EnvSince)
	if raw == "" {
		t.Skipf("checks the engine after a whole test run: `make test` sets %s", EnvSince)
	}
	sec, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", EnvSince, raw, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli := swarmtest.Client(t)
	all, err := swarmtest.Objects(ctx, cli, slwswarm.LabelManaged+"=true")
	if err != nil {
		t.Fatal(err)
	}
	left := madeSince(all, time.Unix(sec, 0))
	if len(left) == 0 {
		summary.Line(t, "leftovers: 0 Docker objects labelled %s=true left by the run", slwswarm.LabelManaged)
		return
	}
	names := make([]string, len(left))
	for i, o := range left {
		names[i] = o.String()
	}
	summary.Line(t, "leftovers: %d Docker objects labelled %s=true made during the run are still there: %s",
		len(left), slwswarm.LabelManaged, strings.Join(names, ", "))
	if os.Getenv(EnvMode) == "fail" {
		t.Fail()
	}
}

// TestNoMultinodeClusterLeft checks that the multi-node test clusters
// (test/multinode/harness) left nothing: no network namespace, dockerd,
// containerd or container, cgroup, mount or data directory. What it finds
// it reports, then removes, so the next run starts clean.
func TestNoMultinodeClusterLeft(t *testing.T) {
	if os.Getenv(EnvSince) == "" {
		t.Skipf("checks the machine after a whole test run: `make test` sets %s", EnvSince)
	}
	left := harness.Leftovers()
	if len(left) == 0 {
		summary.Line(t, "leftovers: nothing of the multi-node test clusters left (namespaces, daemons, cgroups, mounts, data directories)")
		return
	}
	err := harness.RemoveAll()
	summary.Line(t, "leftovers: the multi-node test clusters left %d things: %s (removed now: %v)", len(left), strings.Join(left, "; "), err)
	if os.Getenv(EnvMode) == "fail" {
		t.Fail()
	}
}

func TestMadeSince(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	all := []swarmtest.Object{
		{Kind: "service", Name: "slw-old-web", Created: start.Add(-time.Second)},
		{Kind: "service", Name: "slw-new-web", Created: start},
		{Kind: "network", Name: "slw-new-ingress", Created: start.Add(time.Minute)},
		{Kind: "volume", Name: "slw-new-data"},
	}
	got := madeSince(all, start)
	if len(got) != 3 || got[0].Name != "slw-new-web" || got[1].Name != "slw-new-ingress" || got[2].Name != "slw-new-data" {
		t.Fatalf("madeSince = %v", got)
	}
	if len(all) != 4 {
		t.Fatal("madeSince changed its input")
	}
}
