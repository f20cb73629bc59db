package usage

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/system"

	"github.com/slipwayhq/slipway/runtime/swarm"
)

// Engine is the part of the Engine API the sampler reads.
// *client.Client implements it.
type Engine interface {
	Info(ctx context.Context) (system.Info, error)
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ContainerStatsOneShot(ctx context.Context, containerID string) (container.StatsResponseReader, error)
	swarm.Engine
}

// labelRun marks one-off runs (scheduled job runs, backups): not a
// service's usage.
const labelRun = "dev.slipway.run"

// ServiceKey names a service of an environment.
type ServiceKey struct {
	TeamID        string
	EnvironmentID string
	Service       string
}

// Reading is one container's counters at one moment.
type Reading struct {
	Key         ServiceKey
	ContainerID string
	At          time.Time
	// CPU is the container's total CPU time; Memory its memory in use
	// without the page cache it can drop (as `docker stats` counts it);
	// RX and TX the bytes its interfaces received and sent.
	CPU    time.Duration
	Memory uint64
	RX, TX uint64
}

// Node returns the id of the Swarm node the engine runs on.
func Node(ctx context.Context, eng Engine) (string, error) {
	info, err := eng.Info(ctx)
	if err != nil {
		return "", fmt.Errorf("docker info: %w", err)
	}
	if info.Swarm.NodeID == "" {
		return "", fmt.Errorf("docker info: the engine is not part of a swarm")
	}
	return info.Swarm.NodeID, nil
}

// statsConcurrency bounds the stats requests in flight at once.
const statsConcurrency = 16

// LocalReadings reads every running service container of the engine's
// node: Slipway-managed, of a service (deployment jobs and one-off runs
// excluded). A container that vanishes meanwhile is skipped.
func LocalReadings(ctx context.Context, eng Engine) ([]Reading, error) {
	list, err := eng.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", swarm.LabelManaged+"=true"), filters.Arg("status", "running"))})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	var (
		mu  sync.Mutex
		out []Reading
		wg  sync.WaitGroup
		sem = make(chan struct{}, statsConcurrency)
	)
	for _, c := range list {
		l := c.Labels
		if l[swarm.LabelService] == "" || l[swarm.LabelJob] != "" || l[labelRun] != "" {
			continue
		}
		key := ServiceKey{TeamID: l[swarm.LabelTeam], EnvironmentID: l[swarm.LabelEnv], Service: l[swarm.LabelService]}
		wg.Add(1)
		sem <- struct{}{}
		go func(id string) {
			defer wg.Done()
			defer func() { <-sem }()
			r, err := readStats(ctx, eng, id)
			if err != nil {
				return
			}
			r.Key = key
			mu.Lock()
			out = append(out, r)
			mu.Unlock()
		}(c.ID)
	}
	wg.Wait()
	return out, ctx.Err()
}

func readStats(ctx context.Context, eng Engine, id string) (Reading, error) {
	resp, err := eng.ContainerStatsOneShot(ctx, id)
	if err != nil {
		return Reading{}, err
	}
	defer resp.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return Reading{}, err
	}
	r := Reading{ContainerID: id, At: s.Read, CPU: time.Duration(s.CPUStats.CPUUsage.TotalUsage), Memory: memoryInUse(s.MemoryStats)}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	for _, n := range s.Networks {
		r.RX += n.RxBytes
		r.TX += n.TxBytes
	}
	return r, nil
}

// memoryInUse is usage less the inactive page cache: cgroup v2 names it
// inactive_file, v1 total_inactive_file.
func memoryInUse(m container.MemoryStats) uint64 {
	cache := m.Stats["inactive_file"]
	if v, ok := m.Stats["total_inactive_file"]; ok {
		cache = v
	}
	if cache > m.Usage {
		return m.Usage
	}
	return m.Usage - cache
}

// Rate is what a container used between two readings.
type Rate struct {
	Key ServiceKey
	// Cores is CPU time per second (1 = one core busy); RX and TX bytes
	// per second. Known is false for a container read for the first time
	// (or restarted in place): only Memory is meaningful then.
	Cores  float64
	RX, TX float64
	Memory uint64
	Known  bool
}

// Rates keeps each container's last reading and turns the next into a
// Rate. It is not safe for concurrent use.
type Rates struct {
	last map[string]Reading
}

// Next returns the rate of each reading against the container's previous
// one, and forgets containers that are gone.
func (r *Rates) Next(readings []Reading) []Rate {
	if r.last == nil {
		r.last = map[string]Reading{}
	}
	next := make(map[string]Reading, len(readings))
	out := make([]Rate, 0, len(readings))
	for _, cur := range readings {
		next[cur.ContainerID] = cur
		rate := Rate{Key: cur.Key, Memory: cur.Memory}
		if prev, ok := r.last[cur.ContainerID]; ok {
			dt := cur.At.Sub(prev.At).Seconds()
			if dt > 0 && cur.CPU >= prev.CPU && cur.RX >= prev.RX && cur.TX >= prev.TX {
				rate.Known = true
				rate.Cores = (cur.CPU - prev.CPU).Seconds() / dt
				rate.RX = float64(cur.RX-prev.RX) / dt
				rate.TX = float64(cur.TX-prev.TX) / dt
			}
		}
		out = append(out, rate)
	}
	r.last = next
	return out
}
