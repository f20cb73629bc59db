package swarm

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
)

// CountingEngine wraps an Engine and counts the calls made through it, so
// benchmarks (and bench/deploy) can report Docker API calls per scan.
type CountingEngine struct {
	inner Engine
	calls atomic.Int64
}

// CountCalls wraps e.
func CountCalls(e Engine) *CountingEngine { return &CountingEngine{inner: e} }

// Calls returns the number of calls so far.
func (c *CountingEngine) Calls() int64 { return c.calls.Load() }

// Reset sets the count back to zero.
func (c *CountingEngine) Reset() { c.calls.Store(0) }

func (c *CountingEngine) ServiceList(ctx context.Context, o swarm.ServiceListOptions) ([]swarm.Service, error) {
	c.calls.Add(1)
	return c.inner.ServiceList(ctx, o)
}

func (c *CountingEngine) ServiceInspectWithRaw(ctx context.Context, id string, o swarm.ServiceInspectOptions) (swarm.Service, []byte, error) {
	c.calls.Add(1)
	return c.inner.ServiceInspectWithRaw(ctx, id, o)
}

func (c *CountingEngine) ServiceCreate(ctx context.Context, s swarm.ServiceSpec, o swarm.ServiceCreateOptions) (swarm.ServiceCreateResponse, error) {
	c.calls.Add(1)
	return c.inner.ServiceCreate(ctx, s, o)
}

func (c *CountingEngine) ServiceUpdate(ctx context.Context, id string, v swarm.Version, s swarm.ServiceSpec, o swarm.ServiceUpdateOptions) (swarm.ServiceUpdateResponse, error) {
	c.calls.Add(1)
	return c.inner.ServiceUpdate(ctx, id, v, s, o)
}

func (c *CountingEngine) ServiceRemove(ctx context.Context, id string) error {
	c.calls.Add(1)
	return c.inner.ServiceRemove(ctx, id)
}

func (c *CountingEngine) ServiceLogs(ctx context.Context, id string, o container.LogsOptions) (io.ReadCloser, error) {
	c.calls.Add(1)
	return c.inner.ServiceLogs(ctx, id, o)
}

func (c *CountingEngine) NodeList(ctx context.Context, o swarm.NodeListOptions) ([]swarm.Node, error) {
	c.calls.Add(1)
	return c.inner.NodeList(ctx, o)
}

func (c *CountingEngine) TaskList(ctx context.Context, o swarm.TaskListOptions) ([]swarm.Task, error) {
	c.calls.Add(1)
	return c.inner.TaskList(ctx, o)
}

func (c *CountingEngine) NetworkList(ctx context.Context, o network.ListOptions) ([]network.Summary, error) {
	c.calls.Add(1)
	return c.inner.NetworkList(ctx, o)
}

func (c *CountingEngine) NetworkCreate(ctx context.Context, name string, o network.CreateOptions) (network.CreateResponse, error) {
	c.calls.Add(1)
	return c.inner.NetworkCreate(ctx, name, o)
}

func (c *CountingEngine) NetworkRemove(ctx context.Context, id string) error {
	c.calls.Add(1)
	return c.inner.NetworkRemove(ctx, id)
}

func (c *CountingEngine) ConfigList(ctx context.Context, o swarm.ConfigListOptions) ([]swarm.Config, error) {
	c.calls.Add(1)
	return c.inner.ConfigList(ctx, o)
}

func (c *CountingEngine) ConfigCreate(ctx context.Context, s swarm.ConfigSpec) (swarm.ConfigCreateResponse, error) {
	c.calls.Add(1)
	return c.inner.ConfigCreate(ctx, s)
}

func (c *CountingEngine) ConfigRemove(ctx context.Context, id string) error {
	c.calls.Add(1)
	return c.inner.ConfigRemove(ctx, id)
}

func (c *CountingEngine) SecretList(ctx context.Context, o swarm.SecretListOptions) ([]swarm.Secret, error) {
	c.calls.Add(1)
	return c.inner.SecretList(ctx, o)
}

func (c *CountingEngine) SecretCreate(ctx context.Context, s swarm.SecretSpec) (swarm.SecretCreateResponse, error) {
	c.calls.Add(1)
	return c.inner.SecretCreate(ctx, s)
}

func (c *CountingEngine) SecretRemove(ctx context.Context, id string) error {
	c.calls.Add(1)
	return c.inner.SecretRemove(ctx, id)
}

func (c *CountingEngine) VolumeList(ctx context.Context, o volume.ListOptions) (volume.ListResponse, error) {
	c.calls.Add(1)
	return c.inner.VolumeList(ctx, o)
}

func (c *CountingEngine) VolumeCreate(ctx context.Context, o volume.CreateOptions) (volume.Volume, error) {
	c.calls.Add(1)
	return c.inner.VolumeCreate(ctx, o)
}

func (c *CountingEngine) VolumeRemove(ctx context.Context, id string, force bool) error {
	c.calls.Add(1)
	return c.inner.VolumeRemove(ctx, id, force)
}

func (c *CountingEngine) ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error) {
	c.calls.Add(1)
	return c.inner.ContainerList(ctx, options)
}

func (c *CountingEngine) ContainerRemove(ctx context.Context, id string, options container.RemoveOptions) error {
	c.calls.Add(1)
	return c.inner.ContainerRemove(ctx, id, options)
}
