package manifest

// The Slipway extension of the native schema: scheduled jobs (Job.Schedule,
// Job.Concurrency, Previews.Schedules), Postgres services (Service.Postgres)
// and backups (Spec.Backups). Only api_version = "slipway.dev/v1alpha1"
// manifests may use them; piqueld.dev/v1alpha1 manifests follow the piqueld
// contract exactly and are refused with extension_api_version_invalid.

// Scheduled-run concurrency policies.
const (
	ConcurrencyForbid  = "forbid"
	ConcurrencyReplace = "replace"
)

// Postgres declares a service as a Postgres server: pg_dump and pg_restore
// run in the service's own image and reach it by its service name.
type Postgres struct {
	Database       string `toml:"database,omitempty" json:"database,omitempty" jsonschema:"description=Database dumped and restored. Default postgres."`
	User           string `toml:"user,omitempty" json:"user,omitempty" jsonschema:"description=Role pg_dump and pg_restore connect as. Default postgres."`
	Port           *Int   `toml:"port,omitempty" json:"port,omitempty" jsonschema:"description=Port the server listens on. Default 5432."`
	PasswordSecret string `toml:"password_secret,omitempty" json:"password_secret,omitempty" jsonschema:"description=Secret the service mounts whose value is that role's password; without it the tools connect without a password."`
}

// Backup kinds.
const (
	BackupVolume   = "volume"
	BackupPostgres = "postgres"
)

// Backup declares what is backed up, how often and how long copies are kept.
type Backup struct {
	Name     string `toml:"name" json:"name" jsonschema:"description=Backup name, unique in the application."`
	Volume   string `toml:"volume,omitempty" json:"volume,omitempty" jsonschema:"description=Volume in spec.volumes archived file by file (not consistent for a running database)."`
	Service  string `toml:"service,omitempty" json:"service,omitempty" jsonschema:"description=Postgres service (with [spec.services.postgres]) dumped with pg_dump."`
	Schedule string `toml:"schedule,omitempty" json:"schedule,omitempty" jsonschema:"description=Five-field cron expression in UTC, or @hourly, @daily, @weekly or @monthly; empty backs up by hand only."`
	KeepLast *Int   `toml:"keep_last,omitempty" json:"keep_last,omitempty" jsonschema:"description=Scheduled backups kept (1-1000). Default 7."`
	KeepDays *Int   `toml:"keep_days,omitempty" json:"keep_days,omitempty" jsonschema:"description=Scheduled backups older than this many days are deleted (1-3650); the newest is always kept. Default: no age limit."`
}

// Kind returns BackupVolume or BackupPostgres.
func (b Backup) Kind() string {
	if b.Service != "" {
		return BackupPostgres
	}
	return BackupVolume
}

// Subject is the volume or service the backup copies.
func (b Backup) Subject() string {
	if b.Service != "" {
		return b.Service
	}
	return b.Volume
}

// Postgres and backup defaults.
const (
	DefaultPostgresDatabase = "postgres"
	DefaultPostgresUser     = "postgres"
	DefaultPostgresPort     = 5432
	DefaultBackupKeepLast   = 7
	MaxBackups              = 32
	MaxBackupKeepLast       = 1000
	MaxBackupKeepDays       = 3650
)

// Scheduled reports whether the job runs on a schedule rather than during
// deployments.
func (j Job) Scheduled() bool { return j.Schedule != "" || j.Run == JobRunSchedule }
