package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
)

// fakeEngine is a hand-written in-memory Engine for logic tests: it holds
// services, tasks and networks and answers list calls with the filters the
// driver uses. Writes are not supported.
type fakeEngine struct {
	services []swarm.Service
	tasks    []swarm.Task
	networks []network.Summary
}

var errFakeWrite = errors.New("fake engine: writes are not supported")

func newFakeEngine(env EnvRef, services int) *fakeEngine {
	f := &fakeEngine{}
	labels := map[string]string{LabelManaged: "true", LabelEnv: env.ID}
	f.networks = append(f.networks, network.Summary{ID: "net1", Name: NetworkName(env.ShortID), Labels: labels})
	for i := 0; i < services; i++ {
		name := ServiceName(env.ShortID, fmt.Sprintf("svc%d", i))
		id := fmt.Sprintf("id%d", i)
		f.services = append(f.services, swarm.Service{ID: id, Spec: swarm.ServiceSpec{Annotations: swarm.Annotations{Name: name, Labels: labels}}})
		for r := 0; r < 3; r++ {
			f.tasks = append(f.tasks, swarm.Task{ID: fmt.Sprintf("%s.%d", id, r), ServiceID: id, Spec: swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Labels: labels}}})
		}
	}
	return f
}

func matchName(f filters.Args, name string) bool {
	names := f.Get("name")
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if strings.HasPrefix(name, n) {
			return true
		}
	}
	return false
}

func matchLabels(f filters.Args, labels map[string]string) bool {
	for _, l := range f.Get("label") {
		k, v, _ := strings.Cut(l, "=")
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (f *fakeEngine) ServiceList(_ context.Context, o swarm.ServiceListOptions) ([]swarm.Service, error) {
	var out []swarm.Service
	for _, s := range f.services {
		if matchName(o.Filters, s.Spec.Name) && matchLabels(o.Filters, s.Spec.Labels) {
			out = append(out, s)
		}
	}
	return out, nil
}

func (f *fakeEngine) ServiceInspectWithRaw(_ context.Context, id string, _ swarm.ServiceInspectOptions) (swarm.Service, []byte, error) {
	for _, s := range f.services {
		if s.ID == id || s.Spec.Name == id {
			return s, nil, nil
		}
	}
	return swarm.Service{}, nil, fmt.Errorf("no such service %s", id)
}

func (f *fakeEngine) TaskList(_ context.Context, o swarm.TaskListOptions) ([]swarm.Task, error) {
	var out []swarm.Task
	for _, t := range f.tasks {
		if matchLabels(o.Filters, t.Spec.ContainerSpec.Labels) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (f *fakeEngine) NodeList(context.Context, swarm.NodeListOptions) ([]swarm.Node, error) {
	return nil, nil
}

func (f *fakeEngine) NetworkList(_ context.Context, o network.ListOptions) ([]network.Summary, error) {
	var out []network.Summary
	for _, n := range f.networks {
		if matchName(o.Filters, n.Name) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (f *fakeEngine) ConfigList(context.Context, swarm.ConfigListOptions) ([]swarm.Config, error) {
	return nil, nil
}

func (f *fakeEngine) SecretList(context.Context, swarm.SecretListOptions) ([]swarm.Secret, error) {
	return nil, nil
}

func (f *fakeEngine) VolumeList(context.Context, volume.ListOptions) (volume.ListResponse, error) {
	return volume.ListResponse{}, nil
}

func (f *fakeEngine) ServiceCreate(context.Context, swarm.ServiceSpec, swarm.ServiceCreateOptions) (swarm.ServiceCreateResponse, error) {
	return swarm.ServiceCreateResponse{}, errFakeWrite
}

func (f *fakeEngine) ServiceUpdate(context.Context, string, swarm.Version, swarm.ServiceSpec, swarm.ServiceUpdateOptions) (swarm.ServiceUpdateResponse, error) {
	return swarm.ServiceUpdateResponse{}, errFakeWrite
}

func (f *fakeEngine) ServiceRemove(context.Context, string) error { return errFakeWrite }

func (f *fakeEngine) ServiceLogs(context.Context, string, container.LogsOptions) (io.ReadCloser, error) {
	return nil, errFakeWrite
}

func (f *fakeEngine) NetworkCreate(context.Context, string, network.CreateOptions) (network.CreateResponse, error) {
	return network.CreateResponse{}, errFakeWrite
}

func (f *fakeEngine) NetworkRemove(context.Context, string) error { return errFakeWrite }

func (f *fakeEngine) ConfigCreate(context.Context, swarm.ConfigSpec) (swarm.ConfigCreateResponse, error) {
	return swarm.ConfigCreateResponse{}, errFakeWrite
}

func (f *fakeEngine) ConfigRemove(context.Context, string) error { return errFakeWrite }

func (f *fakeEngine) SecretCreate(context.Context, swarm.SecretSpec) (swarm.SecretCreateResponse, error) {
	return swarm.SecretCreateResponse{}, errFakeWrite
}

func (f *fakeEngine) SecretRemove(context.Context, string) error { return errFakeWrite }

func (f *fakeEngine) VolumeCreate(context.Context, volume.CreateOptions) (volume.Volume, error) {
	return volume.Volume{}, errFakeWrite
}

func (f *fakeEngine) VolumeRemove(context.Context, string, bool) error { return errFakeWrite }

// observeCalls counts the Engine calls of one Observe of n services.
func observeCalls(t testing.TB, n int) (int64, Observed) {
	env := EnvRef{ID: "env-bench", ShortID: "bench1"}
	counter := CountCalls(newFakeEngine(env, n))
	obs, err := NewDriver(counter, nil).Observe(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	return counter.Calls(), obs
}

func TestObserve_ConstantCalls(t *testing.T) {
	small, obsSmall := observeCalls(t, 10)
	large, obsLarge := observeCalls(t, 300)
	if len(obsSmall.Services) != 10 || len(obsLarge.Services) != 300 || len(obsLarge.Tasks) != 900 {
		t.Fatalf("observed %d and %d services, %d tasks", len(obsSmall.Services), len(obsLarge.Services), len(obsLarge.Tasks))
	}
	if small != large {
		t.Fatalf("Observe made %d calls for 10 services and %d for 300", small, large)
	}
	t.Logf("Docker API calls per Observe: %d (10 services), %d (300 services)", small, large)
}

func BenchmarkObserve(b *testing.B) {
	for _, n := range []int{10, 300} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			var calls int64
			for b.Loop() {
				calls, _ = observeCalls(b, n)
			}
			b.ReportMetric(float64(calls), "docker-calls/scan")
		})
	}
}

func (f *fakeEngine) ContainerList(context.Context, container.ListOptions) ([]container.Summary, error) {
	return nil, nil
}

func (f *fakeEngine) ContainerRemove(context.Context, string, container.RemoveOptions) error {
	return errFakeWrite
}
