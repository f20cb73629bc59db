package quota

import (
	"context"
	"fmt"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// Name is a quota's name, as the configuration ([quotas]), the admin
// command and errors spell it.
type Name string

// The quotas, in the order they are shown.
const (
	Applications          Name = "applications"
	Environments          Name = "environments"
	Previews              Name = "previews"
	Replicas              Name = "replicas"
	CPUMillis             Name = "cpu_millis"
	MemoryBytes           Name = "memory_bytes"
	Volumes               Name = "volumes"
	Secrets               Name = "secrets"
	ConcurrentBuilds      Name = "concurrent_builds"
	ConcurrentDeployments Name = "concurrent_deployments"
)

// All lists every quota in display order.
var All = []Name{Applications, Environments, Previews, Replicas, CPUMillis, MemoryBytes, Volumes, Secrets, ConcurrentBuilds, ConcurrentDeployments}

// Code is the error code of a refused change.
const Code = "quota_exceeded"

// Limits maps each quota that has a limit to it; a missing one is
// unlimited.
type Limits map[Name]int64

// Use maps each quota to what the team uses of it.
type Use map[Name]int64

// Error is a change refused because it would exceed a quota.
type Error struct {
	Quota Name
	Limit int64
	// Use is what the team uses now; Want what it would use after the
	// change.
	Use, Want int64
	// Field is where the change asked for it (a manifest path or a form
	// field), for the field error.
	Field string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: the team's %s quota is %s and it uses %s; this change needs %s (ask the operator to raise it: slipway admin team quota)",
		Code, e.Quota, Format(e.Quota, e.Limit), Format(e.Quota, e.Use), Format(e.Quota, e.Want))
}

// ErrorCode is Code.
func (e *Error) ErrorCode() string { return Code }

// Details are the error's API details.
func (e *Error) Details() map[string]any {
	return map[string]any{"field": e.Field, "quota": string(e.Quota), "limit": e.Limit, "use": e.Use, "requested": e.Want}
}

// Format writes a quota's value in its unit.
func Format(n Name, v int64) string {
	switch n {
	case CPUMillis:
		return fmt.Sprintf("%d millicores", v)
	case MemoryBytes:
		if v%(1<<20) == 0 {
			return fmt.Sprintf("%d MiB", v>>20)
		}
		return fmt.Sprintf("%d bytes", v)
	}
	return fmt.Sprint(v)
}

// Get returns the team's limits: the defaults, overridden by the team's
// own values.
func Get(ctx context.Context, st *store.Store, teamID string) (Limits, error) {
	defaults, overrides, err := st.GetQuotas(ctx, teamID)
	if err != nil {
		return nil, err
	}
	out := Limits{}
	d, o := values(defaults), values(overrides)
	for _, n := range All {
		if v := o[n]; v != nil {
			out[n] = *v
		} else if v := d[n]; v != nil {
			out[n] = *v
		}
	}
	return out, nil
}

// values maps a store row to names.
func values(q store.Quotas) map[Name]*int64 {
	return map[Name]*int64{
		Applications: q.Applications, Environments: q.Environments, Previews: q.Previews, Replicas: q.Replicas,
		CPUMillis: q.CPUMillis, MemoryBytes: q.MemoryBytes, Volumes: q.Volumes, Secrets: q.Secrets,
		ConcurrentBuilds: q.ConcurrentBuilds, ConcurrentDeployments: q.ConcurrentDeployments,
	}
}

// Row is the store row of m (names missing from m are nil).
func Row(m map[Name]int64) store.Quotas {
	var q store.Quotas
	ptr := func(n Name) *int64 {
		if v, ok := m[n]; ok {
			return &v
		}
		return nil
	}
	q.Applications, q.Environments, q.Previews, q.Replicas = ptr(Applications), ptr(Environments), ptr(Previews), ptr(Replicas)
	q.CPUMillis, q.MemoryBytes, q.Volumes, q.Secrets = ptr(CPUMillis), ptr(MemoryBytes), ptr(Volumes), ptr(Secrets)
	q.ConcurrentBuilds, q.ConcurrentDeployments = ptr(ConcurrentBuilds), ptr(ConcurrentDeployments)
	return q
}

// Overrides returns the team's own values (not the defaults).
func Overrides(ctx context.Context, st *store.Store, teamID string) (map[Name]int64, error) {
	_, o, err := st.GetQuotas(ctx, teamID)
	if err != nil {
		return nil, err
	}
	out := map[Name]int64{}
	for n, v := range values(o) {
		if v != nil {
			out[n] = *v
		}
	}
	return out, nil
}

// Needs is what a rendered manifest's services reserve: their replicas,
// and replicas times the CPU and memory their resources declare.
type Needs struct {
	Replicas, CPUMillis, MemoryBytes int64
}

// NeedsOf adds up m's services.
func NeedsOf(m *manifest.Manifest) Needs {
	var n Needs
	if m == nil {
		return n
	}
	for _, s := range m.Spec.Services {
		r := s.Replicas.Or(manifest.DefaultReplicas)
		n.Replicas += r
		if s.Resources != nil {
			n.CPUMillis += r * s.Resources.CPUMillis.Or(0)
			n.MemoryBytes += r * s.Resources.MemoryBytes.Or(0)
		}
	}
	return n
}

func (n Needs) add(o Needs) Needs {
	return Needs{n.Replicas + o.Replicas, n.CPUMillis + o.CPUMillis, n.MemoryBytes + o.MemoryBytes}
}

func (n Needs) get(q Name) int64 {
	switch q {
	case Replicas:
		return n.Replicas
	case CPUMillis:
		return n.CPUMillis
	}
	return n.MemoryBytes
}

// Running adds up what runs in each of the team's environments and
// previews now (their latest successful deployment), by environment id.
func Running(ctx context.Context, st *store.Store, teamID string) (map[string]Needs, error) {
	raw, err := st.RunningManifests(ctx, teamID, "")
	if err != nil {
		return nil, err
	}
	out := make(map[string]Needs, len(raw))
	for env, b := range raw {
		m, err := manifest.Decode(b, "json")
		if err != nil {
			// A rendering this version cannot read counts as nothing.
			continue
		}
		out[env] = NeedsOf(m)
	}
	return out, nil
}

// Measure returns what the team uses of every quota now.
func Measure(ctx context.Context, st *store.Store, teamID string) (Use, error) {
	use, err := counts(ctx, st, teamID)
	if err != nil {
		return nil, err
	}
	running, err := Running(ctx, st, teamID)
	if err != nil {
		return nil, err
	}
	var total Needs
	for _, n := range running {
		total = total.add(n)
	}
	use[Replicas], use[CPUMillis], use[MemoryBytes] = total.Replicas, total.CPUMillis, total.MemoryBytes
	return use, nil
}

// Add is what a change adds to a counted quota, and where it asked.
type Add struct {
	Quota Name
	N     int64
	Field string
}

// CheckCounts refuses a change, already written in tx, that took a
// counted quota (applications, environments, previews, volumes, secrets)
// past its limit; adds says what the change added (only those quotas are
// checked). It takes the team's quota lock first, so of two changes at
// once the second counts the first once it committed.
func CheckCounts(ctx context.Context, tx *store.Store, teamID string, adds ...Add) error {
	var todo []Add
	for _, a := range adds {
		if a.N > 0 {
			todo = append(todo, a)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if err := tx.LockTeamQuotas(ctx, teamID); err != nil {
		return err
	}
	limits, err := Get(ctx, tx, teamID)
	if err != nil {
		return err
	}
	var use Use
	for _, a := range todo {
		limit, limited := limits[a.Quota]
		if !limited {
			continue
		}
		if use == nil {
			if use, err = counts(ctx, tx, teamID); err != nil {
				return err
			}
		}
		if use[a.Quota] > limit {
			return &Error{Quota: a.Quota, Limit: limit, Use: use[a.Quota] - a.N, Want: use[a.Quota], Field: a.Field}
		}
	}
	return nil
}

// counts is what the team holds of the counted quotas.
func counts(ctx context.Context, st *store.Store, teamID string) (Use, error) {
	c, err := st.CountQuotaUse(ctx, teamID)
	if err != nil {
		return nil, err
	}
	vols, err := st.CountDeclaredVolumes(ctx, teamID)
	if err != nil {
		return nil, err
	}
	return Use{Applications: c.Applications, Environments: c.Environments, Previews: c.Previews, Secrets: c.Secrets, Volumes: vols,
		ConcurrentBuilds: c.Builds, ConcurrentDeployments: c.Deployments}, nil
}

func anyLimited(l Limits, names map[Name]int64) bool {
	for n := range names {
		if _, ok := l[n]; ok {
			return true
		}
	}
	return false
}

// CheckResources refuses running next in the environments envs (what
// they will run after the change) when, with what the team's other
// environments and previews run, it would exceed the replicas, CPU or
// memory quota, unless it needs no more than envs run now. field names
// where the change asked for it.
func CheckResources(ctx context.Context, st *store.Store, teamID string, envs []string, next Needs, field string) error {
	limits, err := Get(ctx, st, teamID)
	if err != nil {
		return err
	}
	if !anyLimited(limits, map[Name]int64{Replicas: 1, CPUMillis: 1, MemoryBytes: 1}) {
		return nil
	}
	running, err := Running(ctx, st, teamID)
	if err != nil {
		return err
	}
	in := map[string]bool{}
	for _, e := range envs {
		in[e] = true
	}
	var others, now Needs
	for env, n := range running {
		if in[env] {
			now = now.add(n)
		} else {
			others = others.add(n)
		}
	}
	for _, q := range []Name{Replicas, CPUMillis, MemoryBytes} {
		limit, ok := limits[q]
		want := others.get(q) + next.get(q)
		if !ok || want <= limit || next.get(q) <= now.get(q) {
			continue
		}
		return &Error{Quota: q, Limit: limit, Use: others.get(q) + now.get(q), Want: want, Field: field}
	}
	return nil
}

// ParseName reads a quota name as the admin command takes it (dashes or
// underscores).
func ParseName(s string) (Name, bool) {
	n := Name(strings.ReplaceAll(strings.ToLower(s), "-", "_"))
	for _, q := range All {
		if q == n {
			return n, true
		}
	}
	return "", false
}
