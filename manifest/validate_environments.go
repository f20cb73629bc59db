package manifest

import (
	"strings"
)

func (v *validator) environments() {
	envs := v.m.Spec.Environments
	if len(envs) == 0 {
		return
	}
	v.budget("spec.environments", len(envs), MaxEnvironments, "[spec.environments] blocks")
	names := sortedKeys(envs)
	for _, name := range names {
		e := envs[name]
		p := joinKey("spec.environments", name)
		if msg := checkName(name); msg != "" {
			v.add(p, "name_invalid", "environment name %s", msg)
		}
		syncOn := e.Sync != nil && *e.Sync
		if !v.repoBacked {
			if e.Branch != "" {
				v.add(p+".branch", "manifest_repository_required", "branch needs a manifest repository; add [spec.manifest] or remove it")
			}
			if e.Commit != "" {
				v.add(p+".commit", "manifest_repository_required", "commit needs a manifest repository; add [spec.manifest] or remove it")
			}
			if syncOn {
				v.add(p+".sync", "manifest_repository_required", "sync = true needs a manifest repository; add [spec.manifest] or remove it")
			}
		}
		if e.Branch != "" {
			if msg := checkBranch(e.Branch); msg != "" {
				v.add(p+".branch", "branch_invalid", "branch %s", msg)
			}
		}
		if e.Commit != "" {
			if msg := checkCommit(e.Commit); msg != "" {
				v.add(p+".commit", "commit_invalid", "commit %s", msg)
			}
		}
		if e.PromoteFrom != "" {
			var conflicts []string
			if e.Branch != "" {
				conflicts = append(conflicts, "branch")
			}
			if e.Commit != "" {
				conflicts = append(conflicts, "commit")
			}
			if syncOn {
				conflicts = append(conflicts, "sync")
			}
			if len(conflicts) > 0 {
				v.add(p+".promote_from", "environment_source_conflict", "a promoted environment only receives releases; remove %s or promote_from", strings.Join(conflicts, ", "))
			}
			switch _, declared := envs[e.PromoteFrom]; {
			case e.PromoteFrom == name:
				v.add(p+".promote_from", "promotion_cycle", "environment %s cannot promote from itself", name)
			case !declared:
				v.add(p+".promote_from", "promotion_source_invalid", "%q is not a declared environment; promote_from names another [spec.environments.<name>] block", e.PromoteFrom)
			default:
				if cycle := promotionCycle(envs, name); cycle != "" {
					v.add(p+".promote_from", "promotion_cycle", "promotion leads back to %s: %s", name, cycle)
				}
			}
		} else if syncOn && e.Commit != "" {
			v.add(p+".sync", "environment_sync_pinned", "an environment pinned to a commit never follows pushes; remove commit or sync")
		}
		v.visibility(p+".visibility", e.Visibility)
		switch e.Rollback {
		case "", RollbackAutomatic, RollbackManual:
		default:
			v.add(p+".rollback", "rollback_invalid", "rollback must be automatic or manual, got %q", e.Rollback)
		}
	}
}

// promotionCycle follows promote_from from start and describes the chain
// when it returns to start.
func promotionCycle(envs map[string]EnvironmentBlock, start string) string {
	chain := []string{start}
	seen := map[string]bool{start: true}
	for cur := envs[start].PromoteFrom; cur != ""; cur = envs[cur].PromoteFrom {
		chain = append(chain, cur)
		if cur == start {
			return strings.Join(chain, " <- ")
		}
		if seen[cur] {
			return "" // a cycle that does not include start
		}
		seen[cur] = true
		if _, ok := envs[cur]; !ok {
			return ""
		}
	}
	return ""
}

func (v *validator) visibility(p, vis string) {
	switch vis {
	case "", VisibilityPublic, VisibilityPrivate:
	default:
		v.add(p, "visibility_invalid", "visibility must be public or private, got %q", vis)
	}
}

func (v *validator) previews() {
	if pv := v.m.Spec.Previews; pv != nil {
		v.visibility("spec.previews.visibility", pv.Visibility)
	}
}

// Sync defaults.
const DefaultSyncIntervalSeconds = 300

func (v *validator) manifestSource() {
	ms := v.m.Spec.Manifest
	if ms == nil {
		return
	}
	const p = "spec.manifest"
	if msg := checkRepoPath(ms.Path, false); msg != "" {
		v.add(p+".path", "manifest_path_invalid", "path %s", msg)
	} else if ext := strings.ToLower(ms.Path[strings.LastIndexByte(ms.Path, '.')+1:]); !strings.Contains(ms.Path, ".") || ext != "toml" && ext != "json" {
		v.add(p+".path", "manifest_path_invalid", "path %s must name a .toml or .json file", quoteValue(ms.Path))
	}
	v.repository(p+".repository", ms.Repository, false)
	if s := ms.Sync; s != nil {
		switch s.Mode {
		case SyncPoll:
			if s.IntervalSeconds != 0 && (s.IntervalSeconds < MinSyncIntervalSeconds || s.IntervalSeconds > MaxSyncIntervalSeconds) {
				v.add(p+".sync.interval_seconds", "sync_interval_invalid", "interval_seconds must be between 60 and 86,400, got %d", s.IntervalSeconds)
			}
		case SyncWebhook:
			if s.IntervalSeconds != 0 {
				v.add(p+".sync.interval_seconds", "sync_interval_invalid", "interval_seconds applies to mode = \"poll\" only")
			}
		case "":
			v.add(p+".sync.mode", "field_required", "sync needs a mode: poll or webhook")
		default:
			v.add(p+".sync.mode", "sync_mode_invalid", "sync mode must be poll or webhook, got %q", s.Mode)
		}
	}
}

func (v *validator) links() {
	exports := v.m.Spec.Exports
	if len(exports) > MaxExports {
		v.add("spec.exports", "link_count_excessive", "exports per application: %d exceeds the limit of %d", len(exports), MaxExports)
	}
	exported := map[string]int{}
	for i := range exports {
		e := &exports[i]
		p := joinIndex("spec.exports", i)
		if _, ok := v.serviceIndex[e.Service]; !ok {
			v.add(p+".service", "export_service_missing", "%q is not a service of this application", e.Service)
		} else if prev, dup := exported[e.Service]; dup {
			v.add(p+".service", "export_duplicate", "service %s is already exported by spec.exports[%d]; list every application there", e.Service, prev)
		} else {
			exported[e.Service] = i
		}
		if len(e.Applications) == 0 {
			v.add(p+".applications", "export_applications_empty", "an export lists at least one application that may import it")
		}
		if len(e.Applications) > MaxApplicationsPerExp {
			v.add(p+".applications", "link_count_excessive", "applications per export: %d exceeds the limit of %d", len(e.Applications), MaxApplicationsPerExp)
		}
		seen := map[string]bool{}
		for j, app := range e.Applications {
			ap := joinIndex(p+".applications", j)
			v.name(ap, app, "application name")
			if seen[app] {
				v.add(ap, "export_duplicate", "application %s is listed more than once", app)
			}
			seen[app] = true
		}
	}
	imports := v.m.Spec.Imports
	if len(imports) > MaxImports {
		v.add("spec.imports", "link_count_excessive", "imports per application: %d exceeds the limit of %d", len(imports), MaxImports)
	}
	type key struct{ app, svc string }
	imported := map[key]int{}
	for i := range imports {
		im := &imports[i]
		p := joinIndex("spec.imports", i)
		v.name(p+".application", im.Application, "application name")
		v.name(p+".service", im.Service, "service name")
		k := key{im.Application, im.Service}
		if prev, dup := imported[k]; dup {
			v.add(p, "import_duplicate", "service %s of application %s is already imported by spec.imports[%d]", im.Service, im.Application, prev)
		} else {
			imported[k] = i
		}
		if im.Environment != "" && !v.deferred(im.Environment) {
			v.name(p+".environment", im.Environment, "environment name")
		}
	}
}
