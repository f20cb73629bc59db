package manifest

import (
	"sort"
	"strings"
)

// Warnings returns what a manifest can be warned about without knowing the
// running state: they never block a deployment. Codes:
// rollout_start_first_writable_volume, rollback_without_health_check and
// job_stops_services.
func Warnings(m *Manifest) Errors {
	if m == nil {
		return nil
	}
	var ws Errors
	svcs := m.Spec.Services
	routed := map[string]bool{}
	for _, r := range m.Spec.Routes {
		if r.Redirect == nil && r.Service != "" {
			routed[r.Service] = true
		}
	}
	var automatic []string
	for _, name := range sortedKeys(m.Spec.Environments) {
		if EffectiveRollback(m.Spec.Environments[name]) == RollbackAutomatic {
			automatic = append(automatic, name)
		}
	}
	for i := range svcs {
		s := &svcs[i]
		p := joinIndex("spec.services", i)
		if s.Rollout != nil && s.Rollout.Order == RolloutStartFirst {
			if vols := writableVolumes(s); len(vols) > 0 {
				ws = append(ws, FieldError{Path: p + ".rollout.order", Code: "rollout_start_first_writable_volume",
					Message: "start-first runs two tasks side by side that both write volume " + strings.Join(vols, ", ") + "; use stop-first unless the store tolerates two writers"})
			} else if s.ReceivesTelemetry {
				ws = append(ws, FieldError{Path: p + ".rollout.order", Code: "rollout_start_first_writable_volume",
					Message: "start-first runs two telemetry receivers side by side on one socket; use stop-first"})
			}
		}
		if s.Healthcheck == nil && routed[s.Name] && len(automatic) > 0 {
			ws = append(ws, FieldError{Path: p + ".healthcheck", Code: "rollback_without_health_check",
				Message: "routes send traffic to " + s.Name + " but it declares no healthcheck, so a rollout whose containers run without serving can't be detected and rolled back automatically in " + strings.Join(automatic, ", ")})
		}
	}
	index := map[string]int{}
	for i, s := range svcs {
		if _, dup := index[s.Name]; !dup {
			index[s.Name] = i
		}
	}
	for i, j := range m.Spec.Jobs {
		si, ok := index[j.Service]
		if !ok {
			continue
		}
		stopped := map[string]bool{}
		if j.StopService {
			stopped[j.Service] = true
		}
		if j.VolumeAccess == VolumeAccessExcl {
			for _, vol := range writableVolumes(&svcs[si]) {
				for _, other := range svcs {
					for _, mt := range other.Mounts {
						if mt.Volume == vol {
							stopped[other.Name] = true
						}
					}
				}
			}
		}
		if len(stopped) == 0 {
			continue
		}
		names := make([]string, 0, len(stopped))
		for n := range stopped {
			names = append(names, n)
		}
		sort.Strings(names)
		ws = append(ws, FieldError{Path: joinIndex("spec.jobs", i), Code: "job_stops_services",
			Message: "job " + j.Name + " stops " + strings.Join(names, ", ") + " while it runs; they start again with the rollout"})
	}
	return ws
}
