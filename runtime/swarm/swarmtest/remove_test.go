package swarmtest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// TestRemoveLabelled_LeavesNothing: a running service, the network it
// joins, a config it mounts, a secret and a volume carrying one label are
// listed by Objects, all removed by RemoveLabelled, and then none is
// listed; objects of another label stay.
func TestRemoveLabelled_LeavesNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cli := swarmtest.Client(t)
	id := swarmtest.ID()
	mine := map[string]string{swarmtest.LabelKey: "rm-" + id}
	other := swarmtest.Label(t) // removed by its own cleanup
	label := swarmtest.LabelKey + "=rm-" + id
	// If the test fails half-way, what it made still goes.
	swarmtest.RemoveOnCleanup(t, label)
	name := "swarmtest-rm-" + id

	net, err := cli.NetworkCreate(ctx, name, network.CreateOptions{Driver: "overlay", Labels: mine})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := cli.ConfigCreate(ctx, swarm.ConfigSpec{Annotations: swarm.Annotations{Name: name, Labels: mine}, Data: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.SecretCreate(ctx, swarm.SecretSpec{Annotations: swarm.Annotations{Name: name, Labels: mine}, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: mine}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.VolumeCreate(ctx, volume.CreateOptions{Name: name + "-other", Labels: map[string]string{swarmtest.LabelKey: other}}); err != nil {
		t.Fatal(err)
	}
	spec := swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: name, Labels: mine},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{
				Image: swarmtest.Image(t, "job"), Args: []string{"--sleep", "600"}, Labels: mine,
				Configs: []*swarm.ConfigReference{{ConfigID: cfg.ID, ConfigName: name, File: &swarm.ConfigReferenceFileTarget{Name: "/cfg", UID: "0", GID: "0", Mode: 0o444}}},
			},
			Networks: []swarm.NetworkAttachmentConfig{{Target: net.ID}},
		},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}
	if _, err := cli.ServiceCreate(ctx, spec, swarm.ServiceCreateOptions{}); err != nil {
		t.Fatal(err)
	}

	objects, err := swarmtest.Objects(ctx, cli, label)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, o := range objects {
		if o.Created.IsZero() || time.Since(o.Created) > time.Hour {
			t.Errorf("%s created %s, want just now", o, o.Created)
		}
		left = append(left, o.String())
	}
	slices.Sort(left)
	want := []string{"config " + name, "network " + name, "secret " + name, "service " + name, "volume " + name}
	if !slices.Equal(left, want) {
		t.Fatalf("Objects = %q, want %q", left, want)
	}
	if err := swarmtest.RemoveLabelled(ctx, cli, label); err != nil {
		t.Fatal(err)
	}
	if left, err := swarmtest.Objects(ctx, cli, label); err != nil || len(left) != 0 {
		t.Fatalf("after RemoveLabelled: %q %v", left, err)
	}
	if left, err := swarmtest.Objects(ctx, cli, swarmtest.LabelKey+"="+other); err != nil || len(left) != 1 {
		t.Fatalf("the other label's objects: %q %v, want its volume", left, err)
	}
}
