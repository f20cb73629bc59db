package manifest

// Remaining spec defaults (the others sit beside the rules that use them).
const (
	DefaultReplicas             = 1
	DefaultStartPeriodSeconds   = 0
	DefaultRolloutMonitor       = 30
	DefaultFileMode             = "0444"
	DefaultDockerfile           = "Dockerfile"
	DefaultBuildContext         = "."
	DefaultRouteVisibility      = VisibilityPrivate
	DefaultEnvVisibility        = VisibilityPublic
	DefaultPreviewVisibility    = VisibilityPrivate
	DefaultVolumeAccess         = VolumeAccessRead
	DefaultJobRun               = JobRunBeforeRollout
	DefaultRedirectPreservePath = true
)

// ApplyDefaults fills every default the spec states into m and normalizes
// what the spec normalizes (route hostnames lowercased without a trailing
// dot, image registry hosts lowercased). Settings holding a ${{ }}
// reference are left alone. It is idempotent.
//
// Two settings are left unset on purpose because their default is derived
// and plans show whether it was: the rollout order (see
// EffectiveRolloutOrder) and an environment's rollback policy (see
// EffectiveRollback).
func ApplyDefaults(m *Manifest) {
	if m == nil {
		return
	}
	s := &m.Spec
	for i := range s.Services {
		svc := &s.Services[i]
		if svc.Replicas == nil {
			svc.Replicas = NewInt(DefaultReplicas)
		}
		switch svc.Source.Type {
		case SourceImage:
			if !ContainsReference(svc.Source.Image) {
				svc.Source.Image = CanonicalImage(svc.Source.Image)
			}
		case SourceGit:
			if b := svc.Source.Build; b != nil {
				defaultString(&b.Dockerfile, DefaultDockerfile)
				defaultString(&b.Context, DefaultBuildContext)
			}
		}
		if h := svc.Healthcheck; h != nil {
			if h.Type == HealthcheckHTTP {
				defaultString(&h.Path, DefaultHealthcheckPath)
			}
			defaultInt(&h.IntervalSeconds, DefaultHealthcheckInterval)
			defaultInt(&h.TimeoutSeconds, DefaultHealthcheckTimeout)
			defaultInt(&h.StartPeriodSeconds, DefaultStartPeriodSeconds)
			defaultInt(&h.Retries, DefaultHealthcheckRetries)
		}
		if svc.Rollout == nil {
			svc.Rollout = &Rollout{}
		}
		defaultInt(&svc.Rollout.MonitorSeconds, DefaultRolloutMonitor)
		for j := range svc.Files {
			defaultString(&svc.Files[j].Mode, DefaultFileMode)
		}
	}
	for i := range s.Routes {
		r := &s.Routes[i]
		if !ContainsReference(r.Hostname) {
			r.Hostname = NormalizeHostname(r.Hostname)
		}
		defaultString(&r.Visibility, DefaultRouteVisibility)
		if rd := r.Redirect; rd != nil {
			if rd.Status == 0 {
				rd.Status = DefaultRedirectStatus
			}
			if rd.PreservePath == nil {
				t := DefaultRedirectPreservePath
				rd.PreservePath = &t
			}
		}
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.Schedule != "" {
			defaultString(&j.Run, JobRunSchedule)
			defaultString(&j.Concurrency, ConcurrencyForbid)
		}
		defaultString(&j.Run, DefaultJobRun)
		defaultInt(&j.TimeoutSeconds, DefaultJobTimeoutSeconds)
		defaultString(&j.VolumeAccess, DefaultVolumeAccess)
	}
	for i := range s.Secrets {
		if g := &s.Secrets[i].Generate; g.Type == GenerateRandom {
			defaultString(&g.Encoding, DefaultSecretEncoding)
		}
	}
	for name, e := range s.Environments {
		if e.Visibility == "" {
			e.Visibility = DefaultEnvVisibility
			s.Environments[name] = e
		}
	}
	if s.Previews != nil {
		defaultString(&s.Previews.Visibility, DefaultPreviewVisibility)
	}
	for i := range s.Services {
		if pg := s.Services[i].Postgres; pg != nil {
			defaultString(&pg.Database, DefaultPostgresDatabase)
			defaultString(&pg.User, DefaultPostgresUser)
			defaultInt(&pg.Port, DefaultPostgresPort)
		}
	}
	for i := range s.Backups {
		defaultInt(&s.Backups[i].KeepLast, DefaultBackupKeepLast)
	}
	if ms := s.Manifest; ms != nil && ms.Sync != nil && ms.Sync.Mode == SyncPoll && ms.Sync.IntervalSeconds == 0 {
		ms.Sync.IntervalSeconds = DefaultSyncIntervalSeconds
	}
}

func defaultString(s *string, def string) {
	if *s == "" {
		*s = def
	}
}

func defaultInt(i **Int, def int64) {
	if *i == nil {
		*i = NewInt(def)
	}
}

// EffectiveRolloutOrder returns the service's rollout order and whether it
// was derived: stop-first when any volume is mounted writable or the
// service receives telemetry (its socket counts as a writable mount),
// start-first otherwise.
func EffectiveRolloutOrder(s *Service) (order string, derived bool) {
	if s.Rollout != nil && s.Rollout.Order != "" {
		return s.Rollout.Order, false
	}
	if s.ReceivesTelemetry || len(writableVolumes(s)) > 0 {
		return RolloutStopFirst, true
	}
	return RolloutStartFirst, true
}

// EffectiveRollback returns the environment's rollback policy: automatic
// for promoted environments and manual for the others unless set.
func EffectiveRollback(e EnvironmentBlock) string {
	if e.Rollback != "" {
		return e.Rollback
	}
	if e.PromoteFrom != "" {
		return RollbackAutomatic
	}
	return RollbackManual
}
