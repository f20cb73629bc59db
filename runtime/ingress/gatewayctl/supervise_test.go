package gatewayctl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
)

// TestSupervisor_Swarm: the supervisor creates the gateway container and
// joins it to the routed overlays; removed or stopped, the container is
// back within a few checks, on the overlay again, serving the route.
func TestSupervisor_Swarm(t *testing.T) {
	e := setup(t)
	name := "gwt-" + e.id + "-sup"
	e.service(t, name, 1, "sup-v1")
	host := "sup-" + e.id + ".example.com"
	e.publish(t, 1, ingress.Route{Hostname: host, Visibility: ingress.VisibilityPublic,
		Backend: &ingress.Backend{Service: name, Port: 8080, Network: e.overlay}})

	// The first listing fails, as when Postgres is briefly away: the
	// overlays must be joined on a later check.
	var listings atomic.Int64
	const interval = 500 * time.Millisecond
	logs := &syncBuffer{}
	// No image in the configuration: the supervisor builds it, as serve
	// does without [ingress] image.
	cfg := e.cfg
	cfg.Image = ""
	var builds atomic.Int64
	sup := &gatewayctl.Supervisor{
		Manager: gatewayctl.New(e.cli, slog.New(slog.NewTextHandler(logs, nil)), "slipway-gateway-test-"+e.id),
		Config:  cfg,
		BuildImage: func(ctx context.Context) (string, error) {
			builds.Add(1)
			return e.m.BuildDevImage(ctx, e.bin)
		},
		Networks: func(context.Context) ([]string, error) {
			if listings.Add(1) == 1 {
				return nil, errors.New("database unavailable")
			}
			return []string{e.overlay}, nil
		},
		Interval: interval,
	}
	ctx, cancel := context.WithCancel(t.Context())
	first, err := sup.Ensure(ctx)
	if err == nil || first == "" {
		t.Fatalf("first check = %q, %v; want the container and the listing's error", first, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sup.Keep(ctx)
	}()
	// Stop supervising before setup's cleanup removes the container.
	t.Cleanup(func() {
		cancel()
		<-done
	})

	onOverlay := func(want string) func() (bool, string) {
		return func() (bool, string) {
			c, err := e.cli.ContainerInspect(ctx, "slipway-gateway-test-"+e.id)
			if err != nil {
				return false, err.Error()
			}
			_, joined := c.NetworkSettings.Networks[e.overlay]
			if want != "" && c.ID == want {
				return false, "still the old container"
			}
			return c.State.Running && joined, fmt.Sprintf("id %.12s running %v on overlay %v", c.ID, c.State.Running, joined)
		}
	}
	eventually(t, "the gateway joins the overlay once the listing works", 30*time.Second, onOverlay(""))
	eventually(t, "the gateway serves the route", 90*time.Second, expect(e.httpAddr, host, "/version", 200, "sup-v1"))

	t.Run("removed", func(t *testing.T) {
		c, err := e.cli.ContainerInspect(ctx, "slipway-gateway-test-"+e.id)
		if err != nil {
			t.Fatal(err)
		}
		before := c.NetworkSettings.Networks[e.overlay].IPAddress
		start := time.Now()
		if err := e.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a new container on the overlay", 60*time.Second, onOverlay(c.ID))
		t.Logf("container back on the overlay %s after removal (check interval %s)", time.Since(start).Round(10*time.Millisecond), interval)
		eventually(t, "the new container serves the route", 90*time.Second, expect(e.httpAddr, host, "/version", 200, "sup-v1"))
		t.Logf("route served again %s after removal", time.Since(start).Round(10*time.Millisecond))
		addressChangeWarned(t, e, logs, before)
	})

	t.Run("stopped", func(t *testing.T) {
		c, err := e.cli.ContainerInspect(ctx, "slipway-gateway-test-"+e.id)
		if err != nil {
			t.Fatal(err)
		}
		timeout := 0
		if err := e.cli.ContainerStop(ctx, c.ID, container.StopOptions{Timeout: &timeout}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the container runs again", 60*time.Second, func() (bool, string) {
			got, err := e.cli.ContainerInspect(ctx, c.ID)
			if err != nil {
				return false, err.Error()
			}
			return got.State.Running && got.ID == c.ID, fmt.Sprintf("running %v", got.State.Running)
		})
		eventually(t, "the restarted container serves the route", 90*time.Second, expect(e.httpAddr, host, "/version", 200, "sup-v1"))
		addressChangeWarned(t, e, logs, c.NetworkSettings.Networks[e.overlay].IPAddress)
	})

	t.Run("image removed", func(t *testing.T) {
		img, err := e.cli.ImageInspect(ctx, e.image)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// The old image, if the rebuild made another one.
			_, _ = e.cli.ImageRemove(context.Background(), img.ID, image.RemoveOptions{})
		})
		before := builds.Load()
		if _, err := e.cli.ImageRemove(ctx, e.image, image.RemoveOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the supervisor builds the image again", 2*time.Minute, func() (bool, string) {
			_, err := e.cli.ImageInspect(ctx, e.image)
			return err == nil && builds.Load() > before, fmt.Sprintf("builds %d, image %v", builds.Load(), err)
		})
		eventually(t, "the gateway serves the route", 90*time.Second, expect(e.httpAddr, host, "/version", 200, "sup-v1"))
	})
}

// addressChangeWarned checks that the supervisor warned about the
// gateway's new address on the overlay if, and only if, it is not before:
// services were deployed trusting the old one.
func addressChangeWarned(t *testing.T, e *env, logs *syncBuffer, before string) {
	t.Helper()
	var now string
	eventually(t, "the supervisor notes the address", 30*time.Second, func() (bool, string) {
		addrs, err := e.m.Addresses(t.Context())
		if err != nil {
			return false, err.Error()
		}
		now = addrs[e.overlay]
		warned := strings.Contains(logs.String(), fmt.Sprintf("network=%s old=%s new=%s", e.overlay, before, now))
		return now == before || warned, fmt.Sprintf("%s -> %s, warned %v", before, now, warned)
	})
	t.Logf("address on the overlay: %s, now %s", before, now)
	if now == before && strings.Contains(logs.String(), fmt.Sprintf("network=%s old=%s ", e.overlay, before)) {
		t.Fatalf("a change warned though the address stayed %s:\n%s", now, logs.String())
	}
}

// syncBuffer collects the supervisor's logs, written from its goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
