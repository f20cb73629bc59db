package manifest

import (
	"maps"
	"slices"
)

// cloneManifest returns a deep copy, so Render and the canonical form never
// change the caller's manifest or share its slices and maps.
func cloneManifest(m *Manifest) *Manifest {
	c := *m
	s := &c.Spec
	s.Services = slices.Clone(m.Spec.Services)
	for i := range s.Services {
		s.Services[i] = cloneService(s.Services[i])
	}
	s.Volumes = slices.Clone(s.Volumes)
	s.Routes = slices.Clone(s.Routes)
	for i := range s.Routes {
		if r := s.Routes[i].Redirect; r != nil {
			rc := *r
			rc.PreservePath = cloneBool(r.PreservePath)
			s.Routes[i].Redirect = &rc
		}
	}
	s.Jobs = slices.Clone(s.Jobs)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.Command = slices.Clone(j.Command)
		j.TimeoutSeconds = cloneInt(j.TimeoutSeconds)
		j.Environment = maps.Clone(j.Environment)
		j.Secrets = slices.Clone(j.Secrets)
	}
	s.Secrets = slices.Clone(s.Secrets)
	s.Variables = maps.Clone(s.Variables)
	if s.Environments != nil {
		envs := make(map[string]EnvironmentBlock, len(s.Environments))
		for k, e := range s.Environments {
			e.Sync = cloneBool(e.Sync)
			e.Variables = maps.Clone(e.Variables)
			envs[k] = e
		}
		s.Environments = envs
	}
	if p := s.Previews; p != nil {
		pc := *p
		pc.Variables = maps.Clone(p.Variables)
		s.Previews = &pc
	}
	if ms := s.Manifest; ms != nil {
		mc := *ms
		mc.Repository = cloneRepository(ms.Repository)
		if ms.Sync != nil {
			sc := *ms.Sync
			mc.Sync = &sc
		}
		s.Manifest = &mc
	}
	s.Exports = slices.Clone(s.Exports)
	for i := range s.Exports {
		s.Exports[i].Applications = slices.Clone(s.Exports[i].Applications)
	}
	s.Imports = slices.Clone(s.Imports)
	s.Backups = slices.Clone(s.Backups)
	for i := range s.Backups {
		b := &s.Backups[i]
		b.KeepLast, b.KeepDays = cloneInt(b.KeepLast), cloneInt(b.KeepDays)
	}
	return &c
}

func cloneService(svc Service) Service {
	svc.Source.Repository = cloneRepository(svc.Source.Repository)
	if b := svc.Source.Build; b != nil {
		bc := *b
		bc.Args = maps.Clone(b.Args)
		svc.Source.Build = &bc
	}
	svc.Replicas = cloneInt(svc.Replicas)
	svc.Environment = maps.Clone(svc.Environment)
	svc.Command = slices.Clone(svc.Command)
	svc.Arguments = slices.Clone(svc.Arguments)
	if h := svc.Healthcheck; h != nil {
		hc := *h
		hc.Port = cloneInt(h.Port)
		hc.Command = slices.Clone(h.Command)
		hc.IntervalSeconds = cloneInt(h.IntervalSeconds)
		hc.TimeoutSeconds = cloneInt(h.TimeoutSeconds)
		hc.StartPeriodSeconds = cloneInt(h.StartPeriodSeconds)
		hc.Retries = cloneInt(h.Retries)
		svc.Healthcheck = &hc
	}
	if r := svc.Resources; r != nil {
		svc.Resources = &Resources{CPUMillis: cloneInt(r.CPUMillis), MemoryBytes: cloneInt(r.MemoryBytes)}
	}
	svc.Mounts = slices.Clone(svc.Mounts)
	svc.Files = slices.Clone(svc.Files)
	svc.Secrets = slices.Clone(svc.Secrets)
	svc.DependsOn = slices.Clone(svc.DependsOn)
	if r := svc.Rollout; r != nil {
		svc.Rollout = &Rollout{Order: r.Order, MonitorSeconds: cloneInt(r.MonitorSeconds)}
	}
	if pg := svc.Postgres; pg != nil {
		pc := *pg
		pc.Port = cloneInt(pg.Port)
		svc.Postgres = &pc
	}
	return svc
}

func cloneInt(i *Int) *Int {
	if i == nil {
		return nil
	}
	c := *i
	return &c
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	c := *b
	return &c
}

func cloneRepository(r *Repository) *Repository {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}
