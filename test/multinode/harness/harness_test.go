package harness_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/multinode/harness"
	"github.com/slipwayhq/slipway/test/summary"
)

const envChild = "SLIPWAY_MULTINODE_TEST_CHILD"

// TestStartAndDie is the child of TestReapStale: it starts a one-node
// cluster, runs a container in it, prints the cluster's ID and waits to be
// killed.
func TestStartAndDie(t *testing.T) {
	if os.Getenv(envChild) == "" {
		t.Skip("the child process of TestReapStale")
	}
	c, err := harness.Start(context.Background(), harness.Options{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	img := swarmtest.Image(t, "job")
	c.LoadImage(t, img)
	cli := c.Node(1).Client
	ctx := context.Background()
	created, err := cli.ContainerCreate(ctx, &container.Config{Image: img, Cmd: []string{"--sleep", "3600"}}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("cluster " + c.ID + "\n")
	time.Sleep(time.Hour)
}

// TestReapStale: a cluster whose test binary is SIGKILLed (no cleanup
// runs) is listed by LeftoversOf and removed entirely by the next
// ReapStale: namespaces, daemons, cgroups, mounts and directories.
func TestReapStale(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartAndDie$", "-test.v")
	cmd.Env = append(os.Environ(), envChild+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	id := ""
	lines := bufio.NewScanner(out)
	for id == "" && lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "cluster "); ok {
			id = rest
		}
	}
	if id == "" {
		t.Fatal("the child never reported its cluster")
	}
	// Whatever happens below, the cluster goes.
	t.Cleanup(func() { harness.ReapStale() })
	before := harness.LeftoversOf(id)
	kinds := map[string]bool{}
	for _, l := range before {
		kinds[strings.Fields(l)[0]] = true
	}
	for _, want := range []string{"netns", "process", "cgroup", "mount", "directory"} {
		if !kinds[want] {
			t.Errorf("a running cluster shows no %s in LeftoversOf: %q", want, before)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	harness.ReapStale()
	if left := harness.LeftoversOf(id); len(left) > 0 {
		t.Fatalf("after ReapStale, cluster %s left: %q", id, left)
	}
	summary.Line(t, "multinode: a cluster whose test binary was killed (%d objects: namespaces, daemons, cgroups, directories) was removed entirely by the next start", len(before))
}
