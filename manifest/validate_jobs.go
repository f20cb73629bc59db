package manifest

import (
	"strings"
)

// dependencies checks depends_on: existence, duplicates, length and cycles.
func (v *validator) dependencies() {
	svcs := v.m.Spec.Services
	for i := range svcs {
		p := joinIndex("spec.services", i) + ".depends_on"
		deps := svcs[i].DependsOn
		if len(deps) > MaxServiceDependencies {
			// Each entry would also be a duplicate or missing: one error says it.
			v.add(p, "service_dependency_count_excessive", "depends_on lists %d services; at most %d (the service budget)", len(deps), MaxServiceDependencies)
			continue
		}
		seen := make(map[string]bool, len(deps))
		for j, d := range deps {
			dp := joinIndex(p, j)
			if seen[d] {
				v.add(dp, "service_dependency_duplicate", "%q is listed more than once", d)
				continue
			}
			seen[d] = true
			if _, ok := v.serviceIndex[d]; !ok {
				v.add(dp, "service_dependency_missing", "%q is not a service of this application", d)
			}
		}
	}
	g := dependencyGraph(v.m)
	inCycle, behind := g.cycles()
	for i := range svcs {
		p := joinIndex("spec.services", i) + ".depends_on"
		switch {
		case inCycle[i] != nil:
			v.add(p, "service_dependency_cycle", "services depend on each other in a cycle: %s", g.describe(inCycle[i]))
		case behind[i] != nil:
			v.add(p, "service_dependency_cycle", "depends, directly or through others, on services in a cycle: %s", g.describe(behind[i]))
		}
	}
}

// depGraph is the depends_on graph by service index.
type depGraph struct {
	names []string
	edges [][]int
}

func dependencyGraph(m *Manifest) depGraph {
	index := make(map[string]int, len(m.Spec.Services))
	g := depGraph{names: make([]string, len(m.Spec.Services)), edges: make([][]int, len(m.Spec.Services))}
	for i, s := range m.Spec.Services {
		g.names[i] = s.Name
		if _, dup := index[s.Name]; !dup {
			index[s.Name] = i
		}
	}
	for i, s := range m.Spec.Services {
		for _, d := range s.DependsOn {
			if j, ok := index[d]; ok {
				g.edges[i] = append(g.edges[i], j)
			}
		}
	}
	return g
}

// cycles returns, per service, the cycle it is in, or the first cycle it
// depends on through others.
func (g depGraph) cycles() (inCycle, behind [][]int) {
	n := len(g.names)
	inCycle = make([][]int, n)
	behind = make([][]int, n)
	// Tarjan's strongly connected components.
	index, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	next := 0
	var connect func(u int)
	connect = func(u int) {
		index[u], low[u] = next, next
		next++
		stack = append(stack, u)
		onStack[u] = true
		for _, w := range g.edges[u] {
			if index[w] < 0 {
				connect(w)
				low[u] = min(low[u], low[w])
			} else if onStack[w] {
				low[u] = min(low[u], index[w])
			}
		}
		if low[u] != index[u] {
			return
		}
		var comp []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == u {
				break
			}
		}
		cyclic := len(comp) > 1
		if !cyclic {
			for _, w := range g.edges[u] {
				cyclic = cyclic || w == u
			}
		}
		if cyclic {
			sortInts(comp)
			for _, w := range comp {
				inCycle[w] = comp
			}
		}
	}
	for u := 0; u < n; u++ {
		if index[u] < 0 {
			connect(u)
		}
	}
	// A service is behind a cycle when one of its dependencies is in or
	// behind one.
	state := make([]uint8, n) // 0 unvisited, 1 visiting, 2 done
	var reach func(u int) []int
	reach = func(u int) []int {
		if inCycle[u] != nil {
			return inCycle[u]
		}
		if state[u] != 0 {
			return behind[u]
		}
		state[u] = 1
		for _, w := range g.edges[u] {
			if c := reach(w); c != nil && behind[u] == nil {
				behind[u] = c
			}
		}
		state[u] = 2
		return behind[u]
	}
	for u := 0; u < n; u++ {
		reach(u)
	}
	return inCycle, behind
}

func (g depGraph) describe(comp []int) string {
	names := make([]string, len(comp))
	for i, c := range comp {
		names[i] = g.names[c]
	}
	if len(names) == 1 {
		return names[0] + " depends on itself"
	}
	return strings.Join(names, ", ")
}

// transitive returns every service index u depends on, directly or not.
func (g depGraph) transitive(u int) []bool {
	seen := make([]bool, len(g.names))
	var walk func(int)
	walk = func(x int) {
		for _, w := range g.edges[x] {
			if !seen[w] {
				seen[w] = true
				walk(w)
			}
		}
	}
	walk(u)
	return seen
}

func sortInts(s []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Job defaults.
const (
	DefaultJobTimeoutSeconds = 300
)

func (v *validator) jobs() {
	jobs := v.m.Spec.Jobs
	if len(jobs) == 0 {
		return
	}
	v.budget("spec.jobs", len(jobs), MaxJobs, "jobs per application")
	g := dependencyGraph(v.m)
	seen := make(map[string]bool, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		p := joinIndex("spec.jobs", i)
		v.name(p+".name", j.Name, "job name")
		if seen[j.Name] && j.Name != "" {
			v.add(p+".name", "job_name_duplicate", "job %q is declared more than once", j.Name)
		}
		seen[j.Name] = true
		si, ok := v.serviceIndex[j.Service]
		switch {
		case j.Service == "":
			v.add(p+".service", "field_required", "a job names the service whose image, environment, secrets and mounts it reuses")
		case !ok:
			v.add(p+".service", "job_service_missing", "%q is not a service of this application", j.Service)
		}
		switch {
		case j.Run == "" || j.Run == JobRunBeforeRollout:
		case j.Run == JobRunSchedule && v.m.APIVersion != PiqueldAPIVersion:
		case v.m.APIVersion == PiqueldAPIVersion:
			v.add(p+".run", "job_run_invalid", "run must be before-rollout, the only run point, got %q", j.Run)
		default:
			v.add(p+".run", "job_run_invalid", "run must be before-rollout or schedule, got %q", j.Run)
		}
		v.jobSchedule(p, j)
		if t, ok := v.integer(p, ".timeout_seconds", j.TimeoutSeconds); ok {
			v.secondsRange(p+".timeout_seconds", t, 1, MaxJobTimeoutSeconds, "job timeout")
		}
		v.command(p+".command", j.Command)
		v.environment(p+".environment", j.Environment)
		// A job's secrets join its service's targets; collisions with
		// the service's own are conflicts rather than duplicates.
		ts := newTargetSet()
		v.secretMounts(p+".secrets", j.Secrets, ts)
		v.nestedTargets(ts)
		if !ok {
			if j.VolumeAccess != "" && j.VolumeAccess != VolumeAccessRead && j.VolumeAccess != VolumeAccessExcl {
				v.add(p+".volume_access", "job_volume_access_invalid", "volume_access must be read-only or exclusive, got %q", j.VolumeAccess)
			}
			continue
		}
		svc := &v.m.Spec.Services[si]
		v.jobConflicts(p, j, svc)
		v.jobVolumeAccess(p, j, svc, si, g)
		if !j.Scheduled() {
			v.jobOrder(p, i, si, g)
		}
	}
}

func (v *validator) jobConflicts(p string, j *Job, svc *Service) {
	for _, k := range sortedKeys(j.Environment) {
		if _, set := svc.Environment[k]; set {
			v.add(joinKey(p+".environment", k), "job_setting_conflict", "service %s already sets %s; a job can add variables, not override its service's", svc.Name, k)
		}
	}
	used := map[string]string{}
	for i, m := range svc.Mounts {
		used[m.Target] = "a volume mount (" + joinIndex("mounts", i) + ")"
	}
	for i, f := range svc.Files {
		used[f.Target] = "a file (" + joinIndex("files", i) + ")"
	}
	for i, s := range svc.Secrets {
		used[s.Target] = "a secret (" + joinIndex("secrets", i) + ")"
	}
	for i, s := range j.Secrets {
		if what, clash := used[s.Target]; clash && s.Target != "" {
			v.add(joinIndex(p+".secrets", i)+".target", "job_setting_conflict", "service %s already uses %s for %s", svc.Name, quoteValue(s.Target), what)
		}
	}
}

// writableVolumes returns the volumes a service mounts writable.
func writableVolumes(s *Service) []string {
	var vols []string
	for _, m := range s.Mounts {
		if !m.ReadOnly && m.Volume != "" {
			vols = append(vols, m.Volume)
		}
	}
	return vols
}

func (v *validator) jobVolumeAccess(p string, j *Job, svc *Service, si int, g depGraph) {
	switch j.VolumeAccess {
	case "", VolumeAccessRead:
		return
	case VolumeAccessExcl:
	default:
		v.add(p+".volume_access", "job_volume_access_invalid", "volume_access must be read-only or exclusive, got %q", j.VolumeAccess)
		return
	}
	writable := writableVolumes(svc)
	if len(writable) == 0 {
		v.add(p+".volume_access", "job_volume_access_invalid", "exclusive access needs service %s to mount a volume writable, and it mounts none", svc.Name)
		return
	}
	deps := g.transitive(si)
	for d, isDep := range deps {
		if !isDep {
			continue
		}
		for _, m := range v.m.Spec.Services[d].Mounts {
			for _, w := range writable {
				if m.Volume == w {
					v.add(p+".volume_access", "job_volume_access_invalid", "exclusive access stops the services mounting volume %s, but %s, a startup dependency of the job, mounts it", w, v.m.Spec.Services[d].Name)
					return
				}
			}
		}
	}
}

// jobOrder requires the jobs of a job's (transitive) dependencies to be
// declared before it.
func (v *validator) jobOrder(p string, ji, si int, g depGraph) {
	deps := g.transitive(si)
	for k := ji + 1; k < len(v.m.Spec.Jobs); k++ {
		later := &v.m.Spec.Jobs[k]
		if later.Scheduled() {
			continue // scheduled jobs never run during a deployment
		}
		di, ok := v.serviceIndex[later.Service]
		if ok && deps[di] && di != si {
			v.add(p, "job_dependency_order_invalid", "job %s depends on service %s, whose job %s is declared after it; declare %s first", v.m.Spec.Jobs[ji].Name, later.Service, later.Name, later.Name)
		}
	}
}
