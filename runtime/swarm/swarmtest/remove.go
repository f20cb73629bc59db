package swarmtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
)

// Object is one service, network, config, secret or volume on the engine.
type Object struct {
	Kind    string // "service", "network", "config", "secret" or "volume"
	ID      string // the volume's name for volumes
	Name    string
	Created time.Time // zero when the engine does not say
}

func (o Object) String() string { return o.Kind + " " + o.Name }

// Objects lists the services, networks, configs, secrets and volumes
// carrying label ("key=value", such as "dev.slipway.team=<id>"), in that
// order.
func Objects(ctx context.Context, cli *client.Client, label string) ([]Object, error) {
	f := filters.NewArgs(filters.Arg("label", label))
	var out []Object
	services, err := cli.ServiceList(ctx, swarm.ServiceListOptions{Filters: f})
	for _, s := range services {
		out = append(out, Object{"service", s.ID, s.Spec.Name, s.CreatedAt})
	}
	networks, nerr := cli.NetworkList(ctx, network.ListOptions{Filters: f})
	for _, n := range networks {
		out = append(out, Object{"network", n.ID, n.Name, n.Created})
	}
	configs, cerr := cli.ConfigList(ctx, swarm.ConfigListOptions{Filters: f})
	for _, c := range configs {
		out = append(out, Object{"config", c.ID, c.Spec.Name, c.CreatedAt})
	}
	secrets, serr := cli.SecretList(ctx, swarm.SecretListOptions{Filters: f})
	for _, s := range secrets {
		out = append(out, Object{"secret", s.ID, s.Spec.Name, s.CreatedAt})
	}
	volumes, verr := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	for _, v := range volumes.Volumes {
		created, _ := time.Parse(time.RFC3339, v.CreatedAt)
		out = append(out, Object{"volume", v.Name, v.Name, created})
	}
	return out, errors.Join(err, nerr, cerr, serr, verr)
}

// RemoveLabelled deletes every service, network, config, secret and volume
// carrying label. Services go first and their tasks are awaited (tasks are
// found by the same label on the container spec), because networks,
// configs, secrets and volumes in use cannot be removed.
func RemoveLabelled(ctx context.Context, cli *client.Client, label string) error {
	objects, err := Objects(ctx, cli, label)
	errs := []error{err}
	for _, o := range objects {
		if o.Kind == "service" {
			if err := cli.ServiceRemove(ctx, o.ID); err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, waitTasksExited(ctx, cli, filters.NewArgs(filters.Arg("label", label))))
	for _, o := range objects {
		switch o.Kind {
		case "network":
			errs = append(errs, retry(ctx, func() error { return cli.NetworkRemove(ctx, o.ID) }))
		case "config":
			errs = append(errs, retry(ctx, func() error { return cli.ConfigRemove(ctx, o.ID) }))
		case "secret":
			errs = append(errs, retry(ctx, func() error { return cli.SecretRemove(ctx, o.ID) }))
		case "volume":
			errs = append(errs, retry(ctx, func() error { return cli.VolumeRemove(ctx, o.ID, true) }))
		}
	}
	return errors.Join(errs...)
}

// RemoveAndCheck removes everything carrying label, then fails the test,
// naming each object, when anything carrying it is still there: something
// of the test's own (a worker's drift repair, a job still running) made
// it again while it was being removed.
func RemoveAndCheck(t testing.TB, cli *client.Client, label string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := RemoveLabelled(ctx, cli, label); err != nil {
		t.Logf("cleanup %s: %v", label, err)
	}
	left, err := Objects(ctx, cli, label)
	if err != nil {
		t.Errorf("cleanup %s: list what is left: %v", label, err)
		return
	}
	if len(left) > 0 {
		// A Docker request a killed process sent just before dying (a
		// network being created) can land after the first listing: one
		// more round removes such a straggler. What comes back again is
		// made by something of the test's still running.
		t.Logf("cleanup %s: %d objects appeared while removing; removing them once more", label, len(left))
		time.Sleep(2 * time.Second)
		if err := RemoveLabelled(ctx, cli, label); err != nil {
			t.Logf("cleanup %s: %v", label, err)
		}
		if left, err = Objects(ctx, cli, label); err != nil {
			t.Errorf("cleanup %s: list what is left: %v", label, err)
			return
		}
	}
	if len(left) > 0 {
		names := make([]string, len(left))
		for i, o := range left {
			names[i] = o.String()
		}
		t.Errorf("LEAKED Docker objects labelled %s after cleanup: %s (stop the test's worker, gateway and jobs before removing its objects)",
			label, strings.Join(names, ", "))
	}
}

// RemoveOnCleanup registers RemoveAndCheck of label for when the test
// ends. Cleanups run last-registered first: call it before starting what
// makes such objects on its own (a worker, whose drift repair brings
// removed services back; a gateway, which holds ingress networks), so it
// runs once they are stopped.
func RemoveOnCleanup(t testing.TB, label string) {
	t.Helper()
	if !strings.Contains(label, "=") || strings.HasSuffix(label, "=") {
		t.Fatalf("swarmtest: label %q is not key=value", label)
	}
	cli := Client(t)
	t.Cleanup(func() { RemoveAndCheck(t, cli, label) })
}
