package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

var shared struct {
	cluster *Cluster
	err     error
}

// Main starts the package's cluster, runs the tests and removes the
// cluster, whatever the tests did (a test's panic ends the binary before
// Main returns: the next Start, or the leftovers check, removes it then).
// Use it from TestMain: os.Exit(harness.Main(m, opts)).
func Main(m *testing.M, opts Options) int {
	c, err := Start(context.Background(), opts)
	shared.cluster, shared.err = c, err
	code := m.Run()
	if c != nil {
		start := time.Now()
		if err := c.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "multinode: teardown: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		fmt.Fprintf(os.Stderr, "multinode: %d nodes Ready in %s, removed in %s\n", len(c.Nodes), c.Ready.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
		if left := Leftovers(); len(left) > 0 && !otherClusters(c.ID) {
			fmt.Fprintf(os.Stderr, "multinode: left after teardown: %v\n", left)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// otherClusters reports whether a cluster other than id has a directory
// (another test package runs one now: its objects are not leftovers).
func otherClusters(id string) bool {
	for other := range clusterIDs() {
		if other != id {
			return true
		}
	}
	return false
}

// Shared returns the cluster Main started, failing the test if it could
// not start.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if shared.cluster == nil && shared.err == nil {
		t.Fatal("multinode: no cluster: call harness.Main from TestMain")
	}
	if shared.err != nil {
		t.Fatalf("multinode: the cluster did not start: %v", shared.err)
	}
	return shared.cluster
}

// LoadImage copies an image from the host's engine (where swarmtest builds
// test images) into every node, as `docker save | docker load` would. A
// reference already loaded is not loaded again.
func (c *Cluster) LoadImage(t testing.TB, ref string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded[ref] {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	host := swarmtest.Client(t)
	if err := c.loadImage(ctx, host, ref); err != nil {
		t.Fatalf("multinode: load image %s: %v", ref, err)
	}
	c.loaded[ref] = true
}

func (c *Cluster) loadImage(ctx context.Context, host *client.Client, ref string) error {
	rc, err := host.ImageSave(ctx, []string{ref})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(c.run, "image-*.tar")
	if err != nil {
		rc.Close()
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.ReadFrom(rc); err != nil {
		rc.Close()
		return err
	}
	rc.Close()
	var wg sync.WaitGroup
	errs := make([]error, len(c.Nodes))
	for i, n := range c.Nodes {
		wg.Go(func() {
			in, err := os.Open(filepath.Clean(f.Name()))
			if err != nil {
				errs[i] = err
				return
			}
			defer in.Close()
			resp, err := n.Client.ImageLoad(ctx, in, client.ImageLoadWithQuiet(true))
			if err != nil {
				errs[i] = fmt.Errorf("node %d: %w", n.Index, err)
				return
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(resp.Body)
			if err == nil && bytes.Contains(out, []byte(`"error"`)) {
				err = fmt.Errorf("%s", out)
			}
			if err != nil {
				errs[i] = fmt.Errorf("node %d: %w", n.Index, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
