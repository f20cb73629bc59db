package manifest

import (
	"regexp"
	"strconv"
)

// extension refuses the Slipway extension (types_slipway.go) in manifests
// that declare the piqueld contract, which does not have it.
func (v *validator) extension() {
	if v.m.APIVersion != PiqueldAPIVersion {
		return
	}
	refuse := func(path, what string) {
		v.add(path, "extension_api_version_invalid", "%s is a Slipway extension that %s manifests do not have; set api_version = %q to use it", what, PiqueldAPIVersion, APIVersion)
	}
	s := &v.m.Spec
	for i := range s.Services {
		if s.Services[i].Postgres != nil {
			refuse(joinIndex("spec.services", i)+".postgres", "a Postgres service declaration")
		}
	}
	for i := range s.Jobs {
		p := joinIndex("spec.jobs", i)
		if s.Jobs[i].Schedule != "" {
			refuse(p+".schedule", "a job schedule")
		}
		if s.Jobs[i].Concurrency != "" {
			refuse(p+".concurrency", "a scheduled job's concurrency")
		}
	}
	if len(s.Backups) > 0 {
		refuse("spec.backups", "backups")
	}
	if s.Previews != nil && s.Previews.Schedules {
		refuse("spec.previews.schedules", "running schedules in previews")
	}
}

// jobSchedule checks a scheduled job's schedule and concurrency, and the
// settings that only a before-rollout job may have.
func (v *validator) jobSchedule(p string, j *Job) {
	if v.m.APIVersion == PiqueldAPIVersion {
		return // extension() reports the fields themselves
	}
	if !j.Scheduled() {
		if j.Concurrency != "" {
			v.add(p+".concurrency", "job_concurrency_invalid", "concurrency applies to scheduled jobs; set schedule, or remove concurrency")
		}
		return
	}
	switch {
	case j.Schedule == "":
		v.add(p+".schedule", "job_schedule_missing", "run = \"schedule\" needs a schedule, such as \"0 3 * * *\" or \"@daily\"")
	case j.Run == JobRunBeforeRollout:
		v.add(p+".run", "job_schedule_run_conflict", "a job with a schedule runs on it, not before rollout; remove run or the schedule")
	}
	v.schedule(p+".schedule", j.Schedule, "job_schedule_invalid")
	switch j.Concurrency {
	case "", ConcurrencyForbid, ConcurrencyReplace:
	default:
		v.add(p+".concurrency", "job_concurrency_invalid", "concurrency must be forbid or replace, got %q", j.Concurrency)
	}
	if j.StopService {
		v.add(p+".stop_service", "job_schedule_stops_services", "a scheduled job runs beside its running service; stop_service is for before-rollout jobs")
	}
	if j.VolumeAccess == VolumeAccessExcl {
		v.add(p+".volume_access", "job_schedule_stops_services", "a scheduled job runs beside the services mounting its volumes; exclusive access is for before-rollout jobs")
	}
}

// schedule parses a schedule unless it waits for rendering.
func (v *validator) schedule(path, s, code string) {
	if s == "" || v.deferred(s) {
		return
	}
	if _, err := ParseSchedule(s); err != nil {
		v.add(path, code, "%v", err)
	}
}

// postgresName is what pg_dump is given as a database or role name: no
// option-looking or quoted names.
var postgresName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$-]{0,62}$`)

func (v *validator) postgres(p string, s *Service) {
	pg := s.Postgres
	if pg == nil {
		return
	}
	for _, f := range []struct{ key, val string }{{"database", pg.Database}, {"user", pg.User}} {
		if f.val != "" && !v.deferred(f.val) && !postgresName.MatchString(f.val) {
			v.add(p+"."+f.key, "postgres_name_invalid", "%s must be 1-63 letters, digits, _, $ or -, starting with a letter or _; got %s", f.key, quoteValue(f.val))
		}
	}
	if port, ok := v.integer(p, ".port", pg.Port); ok && (port < 1 || port > 65535) {
		v.add(p+".port", "value_out_of_range", "port must be between 1 and 65535, got %d", port)
	}
	if ps := pg.PasswordSecret; ps != "" && !v.deferred(ps) {
		for _, m := range s.Secrets {
			if m.Name == ps {
				return
			}
		}
		v.add(p+".password_secret", "postgres_password_secret_missing", "service %s mounts no secret %q; add it to the service's secrets, or remove password_secret", s.Name, ps)
	}
}

func (v *validator) backups() {
	bs := v.m.Spec.Backups
	if len(bs) == 0 || v.m.APIVersion == PiqueldAPIVersion {
		return
	}
	v.budget("spec.backups", len(bs), MaxBackups, "backups per application")
	seen := make(map[string]bool, len(bs))
	for i := range bs {
		b := &bs[i]
		p := joinIndex("spec.backups", i)
		v.name(p+".name", b.Name, "backup name")
		if seen[b.Name] && b.Name != "" {
			v.add(p+".name", "backup_name_duplicate", "backup %q is declared more than once", b.Name)
		}
		seen[b.Name] = true
		switch {
		case b.Volume != "" && b.Service != "":
			v.add(p, "backup_subject_invalid", "a backup copies a volume or a Postgres service, not both; split it into two backups")
		case b.Volume == "" && b.Service == "":
			v.add(p, "backup_subject_invalid", "set volume (a volume in spec.volumes) or service (a Postgres service)")
		case b.Volume != "" && !v.volumeNames[b.Volume]:
			v.add(p+".volume", "backup_volume_missing", "%q is not a volume in spec.volumes", b.Volume)
		case b.Service != "":
			si, ok := v.serviceIndex[b.Service]
			switch {
			case !ok:
				v.add(p+".service", "backup_service_missing", "%q is not a service of this application", b.Service)
			case v.m.Spec.Services[si].Postgres == nil:
				v.add(p+".service", "backup_service_not_postgres", "service %s is not declared as Postgres; add [spec.services.postgres] to it, or back up its volume instead", b.Service)
			}
		}
		v.schedule(p+".schedule", b.Schedule, "backup_schedule_invalid")
		v.keep(p+".keep_last", b.KeepLast, MaxBackupKeepLast, "backups kept")
		v.keep(p+".keep_days", b.KeepDays, MaxBackupKeepDays, "days backups are kept")
	}
}

func (v *validator) keep(path string, i *Int, max int64, what string) {
	n, ok := v.integer(path, "", i)
	if ok && (n < 1 || n > max) {
		v.add(path, "value_out_of_range", "%s must be between 1 and %s, got %s", what, strconv.FormatInt(max, 10), strconv.FormatInt(n, 10))
	}
}
