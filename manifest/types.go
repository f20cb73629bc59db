package manifest

// The types below are the whole manifest surface of
// spec/piqueld-application-manifest.md. Field tags carry both the TOML and the
// JSON name (they are the same) and the JSON Schema description.
//
// Fields that may hold a single ${{ }} reference instead of a number use Int;
// fields that are plain strings keep references inline and are rendered by
// Render. A rendered manifest never holds a reference in an Int.

// APIVersion is Slipway's own manifest version.
const APIVersion = "slipway.dev/v1alpha1"

// PiqueldAPIVersion is accepted unchanged.
const PiqueldAPIVersion = "piqueld.dev/v1alpha1"

// Kind is the only supported document kind.
const Kind = "Application"

// Manifest is one Application document.
type Manifest struct {
	APIVersion string   `toml:"api_version" json:"api_version" jsonschema:"enum=slipway.dev/v1alpha1,enum=piqueld.dev/v1alpha1,description=Manifest version."`
	Kind       string   `toml:"kind" json:"kind" jsonschema:"enum=Application,description=Document kind; always Application."`
	Metadata   Metadata `toml:"metadata" json:"metadata" jsonschema:"description=Identity of the application."`
	Spec       Spec     `toml:"spec,omitempty" json:"spec,omitempty" jsonschema:"description=What the application runs."`
}

// Metadata identifies the application.
type Metadata struct {
	Name string `toml:"name" json:"name" jsonschema:"description=Application name: 1-63 lowercase letters, digits or hyphens, starting with a letter."`
}

// Spec is everything an application declares.
type Spec struct {
	Services     []Service                   `toml:"services,omitempty" json:"services,omitempty" jsonschema:"description=Long-running services."`
	Volumes      []Volume                    `toml:"volumes,omitempty" json:"volumes,omitempty" jsonschema:"description=Named volumes; retained when the application is deleted."`
	Routes       []Route                     `toml:"routes,omitempty" json:"routes,omitempty" jsonschema:"description=HTTP routes served by the managed ingress."`
	Jobs         []Job                       `toml:"jobs,omitempty" json:"jobs,omitempty" jsonschema:"description=Containers run to completion during a deployment."`
	Secrets      []SecretDeclaration         `toml:"secrets,omitempty" json:"secrets,omitempty" jsonschema:"description=Secrets whose values Slipway generates per environment."`
	Variables    map[string]Value            `toml:"variables,omitempty" json:"variables,omitempty" jsonschema:"description=Variable defaults, referenced as ${{ vars.<name> }}."`
	Environments map[string]EnvironmentBlock `toml:"environments,omitempty" json:"environments,omitempty" jsonschema:"description=Declared environments and where each deploys from."`
	Previews     *Previews                   `toml:"previews,omitempty" json:"previews,omitempty" jsonschema:"description=Settings shared by every preview."`
	Manifest     *ManifestSource             `toml:"manifest,omitempty" json:"manifest,omitempty" jsonschema:"description=Read the manifest from a Git repository."`
	Exports      []Export                    `toml:"exports,omitempty" json:"exports,omitempty" jsonschema:"description=Services other applications may reach through a link."`
	Imports      []Import                    `toml:"imports,omitempty" json:"imports,omitempty" jsonschema:"description=Services of other applications this one reaches through a link."`
	Backups      []Backup                    `toml:"backups,omitempty" json:"backups,omitempty" jsonschema:"description=Slipway extension (slipway.dev/v1alpha1 only): volumes and Postgres services backed up on a schedule."`
}

// Service is one long-running service.
type Service struct {
	Name              string            `toml:"name" json:"name" jsonschema:"description=Service name; also its network alias."`
	Source            Source            `toml:"source" json:"source" jsonschema:"description=Prebuilt image or Git build."`
	Replicas          *Int              `toml:"replicas,omitempty" json:"replicas,omitempty" jsonschema:"description=Replica count (1-100; 0 stops it). Default 1."`
	Environment       map[string]string `toml:"environment,omitempty" json:"environment,omitempty" jsonschema:"description=Environment variables."`
	Command           []string          `toml:"command,omitempty" json:"command,omitempty" jsonschema:"description=Replaces the image's entrypoint."`
	Arguments         []string          `toml:"arguments,omitempty" json:"arguments,omitempty" jsonschema:"description=Replaces the image's default arguments."`
	Healthcheck       *Healthcheck      `toml:"healthcheck,omitempty" json:"healthcheck,omitempty" jsonschema:"description=Readiness and liveness check."`
	Resources         *Resources        `toml:"resources,omitempty" json:"resources,omitempty" jsonschema:"description=CPU and memory limits."`
	Mounts            []Mount           `toml:"mounts,omitempty" json:"mounts,omitempty" jsonschema:"description=Named volume mounts."`
	Files             []File            `toml:"files,omitempty" json:"files,omitempty" jsonschema:"description=Read-only files."`
	Secrets           []SecretMount     `toml:"secrets,omitempty" json:"secrets,omitempty" jsonschema:"description=Secret files under /run/secrets."`
	DependsOn         []string          `toml:"depends_on,omitempty" json:"depends_on,omitempty" jsonschema:"description=Services that must converge first."`
	Rollout           *Rollout          `toml:"rollout,omitempty" json:"rollout,omitempty" jsonschema:"description=Rollout order and monitor window."`
	ReceivesTelemetry bool              `toml:"receives_telemetry,omitempty" json:"receives_telemetry,omitempty" jsonschema:"description=Receive the daemon's telemetry socket."`
	Postgres          *Postgres         `toml:"postgres,omitempty" json:"postgres,omitempty" jsonschema:"description=Slipway extension (slipway.dev/v1alpha1 only): the service is a Postgres server, backed up with pg_dump run in its image."`
}

// Source types.
const (
	SourceImage = "image"
	SourceGit   = "git"
)

// Source selects a prebuilt image or a Git build.
type Source struct {
	Type       string      `toml:"type" json:"type" jsonschema:"enum=image,enum=git,description=image or git."`
	Image      string      `toml:"image,omitempty" json:"image,omitempty" jsonschema:"description=Image reference (type image)."`
	Repository *Repository `toml:"repository,omitempty" json:"repository,omitempty" jsonschema:"description=Git repository, or the string self (type git)."`
	Build      *Build      `toml:"build,omitempty" json:"build,omitempty" jsonschema:"description=How to build the image (type git)."`
}

// Repository is a Git repository, or "self": the manifest's own repository.
// In TOML and JSON it is either a table or the string "self".
type Repository struct {
	Self   bool   `toml:"-" json:"-"`
	URL    string `toml:"url,omitempty" json:"url,omitempty" jsonschema:"description=Clone URL (file, git, http(s) or ssh)."`
	Branch string `toml:"branch,omitempty" json:"branch,omitempty" jsonschema:"description=Branch whose head is built."`
	Commit string `toml:"commit,omitempty" json:"commit,omitempty" jsonschema:"description=Full commit hash; wins over branch."`

	// problem describes a value that is neither "self" nor a table of the
	// fields above, and problemKey the offending key; Decode reports them
	// with their position (see decode_repository.go).
	problem    string
	problemKey string
}

// Build describes a Docker build.
type Build struct {
	Type       string            `toml:"type" json:"type" jsonschema:"enum=docker,description=Build backend; docker."`
	Dockerfile string            `toml:"dockerfile,omitempty" json:"dockerfile,omitempty" jsonschema:"description=Dockerfile path relative to the repository root. Default Dockerfile."`
	Context    string            `toml:"context,omitempty" json:"context,omitempty" jsonschema:"description=Build context relative to the repository root. Default ."`
	Args       map[string]string `toml:"args,omitempty" json:"args,omitempty" jsonschema:"description=Build arguments (not secret)."`
	Target     string            `toml:"target,omitempty" json:"target,omitempty" jsonschema:"description=Multi-stage target."`
}

// Health-check types.
const (
	HealthcheckHTTP    = "http"
	HealthcheckCommand = "command"
)

// Healthcheck is an HTTP or command check.
type Healthcheck struct {
	Type               string   `toml:"type" json:"type" jsonschema:"enum=http,enum=command,description=http or command."`
	Port               *Int     `toml:"port,omitempty" json:"port,omitempty" jsonschema:"description=Port of an HTTP check."`
	Path               string   `toml:"path,omitempty" json:"path,omitempty" jsonschema:"description=Absolute path of an HTTP check. Default /health."`
	Command            []string `toml:"command,omitempty" json:"command,omitempty" jsonschema:"description=Command of a command check, run without a shell."`
	IntervalSeconds    *Int     `toml:"interval_seconds,omitempty" json:"interval_seconds,omitempty" jsonschema:"description=Seconds between checks. Default 10."`
	TimeoutSeconds     *Int     `toml:"timeout_seconds,omitempty" json:"timeout_seconds,omitempty" jsonschema:"description=Seconds before a check fails; at most the interval. Default 3."`
	StartPeriodSeconds *Int     `toml:"start_period_seconds,omitempty" json:"start_period_seconds,omitempty" jsonschema:"description=Failures do not count during this start period. Default 0."`
	Retries            *Int     `toml:"retries,omitempty" json:"retries,omitempty" jsonschema:"description=Consecutive failures before unhealthy (1-100). Default 3."`
}

// Resources are CPU and memory limits.
type Resources struct {
	CPUMillis   *Int `toml:"cpu_millis,omitempty" json:"cpu_millis,omitempty" jsonschema:"description=CPU limit in millicores."`
	MemoryBytes *Int `toml:"memory_bytes,omitempty" json:"memory_bytes,omitempty" jsonschema:"description=Memory limit in bytes."`
}

// Mount mounts a declared named volume.
type Mount struct {
	Volume   string `toml:"volume" json:"volume" jsonschema:"description=Name of a volume in spec.volumes."`
	Target   string `toml:"target" json:"target" jsonschema:"description=Absolute container path."`
	ReadOnly bool   `toml:"read_only,omitempty" json:"read_only,omitempty" jsonschema:"description=Mount read-only."`
}

// File is a read-only file, from inline content or a repository path.
type File struct {
	Target  string `toml:"target" json:"target" jsonschema:"description=Absolute container path."`
	Path    string `toml:"path,omitempty" json:"path,omitempty" jsonschema:"description=Path in the manifest repository."`
	Content string `toml:"content,omitempty" json:"content,omitempty" jsonschema:"description=Inline content (never rendered)."`
	Mode    string `toml:"mode,omitempty" json:"mode,omitempty" jsonschema:"description=Octal mode 0000-0777. Default 0444."`
}

// SecretMount mounts a generated or stored secret as a file.
type SecretMount struct {
	Name   string `toml:"name" json:"name" jsonschema:"description=Secret name (may reference a variable)."`
	Target string `toml:"target" json:"target" jsonschema:"description=Path under /run/secrets."`
}

// Rollout orders.
const (
	RolloutStartFirst = "start-first"
	RolloutStopFirst  = "stop-first"
)

// Rollout controls how replacements are rolled out.
type Rollout struct {
	Order          string `toml:"order,omitempty" json:"order,omitempty" jsonschema:"description=start-first or stop-first; derived from mounts when unset."`
	MonitorSeconds *Int   `toml:"monitor_seconds,omitempty" json:"monitor_seconds,omitempty" jsonschema:"description=Monitor window (1-3600). Default 30."`
}

// Volume is a named volume.
type Volume struct {
	Name string `toml:"name" json:"name" jsonschema:"description=Volume name."`
}

// Visibility values.
const (
	VisibilityPublic  = "public"
	VisibilityPrivate = "private"
)

// Route sends a hostname to a service port, or redirects it.
type Route struct {
	Name       string    `toml:"name,omitempty" json:"name,omitempty" jsonschema:"description=Stable route name, unique in the application."`
	Hostname   string    `toml:"hostname" json:"hostname" jsonschema:"description=Exact hostname or *. wildcard one label deep."`
	Service    string    `toml:"service,omitempty" json:"service,omitempty" jsonschema:"description=Target service."`
	Port       int       `toml:"port,omitempty" json:"port,omitempty" jsonschema:"description=Target service port (1-65535)."`
	Visibility string    `toml:"visibility,omitempty" json:"visibility,omitempty" jsonschema:"description=public or private. Default private."`
	Redirect   *Redirect `toml:"redirect,omitempty" json:"redirect,omitempty" jsonschema:"description=Answer with a redirect instead of proxying."`
}

// Redirect is answered by the gateway.
type Redirect struct {
	To           string `toml:"to" json:"to" jsonschema:"description=http(s) URL to redirect to."`
	Status       int    `toml:"status,omitempty" json:"status,omitempty" jsonschema:"description=301 302 303 307 or 308. Default 308."`
	PreservePath *bool  `toml:"preserve_path,omitempty" json:"preserve_path,omitempty" jsonschema:"description=Append the request path and query. Default true."`
}

// Job run points and volume access modes.
const (
	JobRunBeforeRollout = "before-rollout"
	// JobRunSchedule is the Slipway extension's run point: on the job's
	// schedule, beside the running services, never during a deployment.
	JobRunSchedule   = "schedule"
	VolumeAccessRead = "read-only"
	VolumeAccessExcl = "exclusive"
)

// Job runs a container to completion during a deployment.
type Job struct {
	Name           string            `toml:"name" json:"name" jsonschema:"description=Job name."`
	Service        string            `toml:"service" json:"service" jsonschema:"description=Service whose image, environment, secrets and mounts the job reuses."`
	Command        []string          `toml:"command,omitempty" json:"command,omitempty" jsonschema:"description=Replaces the service's command and arguments."`
	Run            string            `toml:"run,omitempty" json:"run,omitempty" jsonschema:"enum=before-rollout,enum=schedule,description=When the job runs: before-rollout, or schedule (Slipway extension). Default before-rollout, or schedule when schedule is set."`
	TimeoutSeconds *Int              `toml:"timeout_seconds,omitempty" json:"timeout_seconds,omitempty" jsonschema:"description=1-86400. Default 300."`
	VolumeAccess   string            `toml:"volume_access,omitempty" json:"volume_access,omitempty" jsonschema:"enum=read-only,enum=exclusive,description=Default read-only."`
	StopService    bool              `toml:"stop_service,omitempty" json:"stop_service,omitempty" jsonschema:"description=Stop the service while the job runs."`
	Environment    map[string]string `toml:"environment,omitempty" json:"environment,omitempty" jsonschema:"description=Added to the service's environment for the job only."`
	Secrets        []SecretMount     `toml:"secrets,omitempty" json:"secrets,omitempty" jsonschema:"description=Added to the service's secrets for the job only."`
	Schedule       string            `toml:"schedule,omitempty" json:"schedule,omitempty" jsonschema:"description=Slipway extension (slipway.dev/v1alpha1 only): five-field cron expression in UTC, or @hourly, @daily, @weekly or @monthly. The job then runs on this schedule instead of before rollout."`
	Concurrency    string            `toml:"concurrency,omitempty" json:"concurrency,omitempty" jsonschema:"enum=forbid,enum=replace,description=Slipway extension: what a scheduled run does while the previous one still runs: forbid (skip it) or replace (stop the previous one). Default forbid."`
}

// SecretDeclaration asks Slipway to generate a secret per environment.
type SecretDeclaration struct {
	Name     string   `toml:"name" json:"name" jsonschema:"description=Secret name."`
	Generate Generate `toml:"generate" json:"generate" jsonschema:"description=How the value is generated."`
}

// Generator types and encodings.
const (
	GenerateRandom    = "random"
	GenerateRSA       = "rsa"
	EncodingHex       = "hex"
	EncodingBase64URL = "base64url"
)

// Generate describes a generated value.
type Generate struct {
	Type     string `toml:"type" json:"type" jsonschema:"enum=random,enum=rsa,description=random or rsa."`
	Bytes    int    `toml:"bytes,omitempty" json:"bytes,omitempty" jsonschema:"description=Random bytes (16-512)."`
	Encoding string `toml:"encoding,omitempty" json:"encoding,omitempty" jsonschema:"description=hex (default) or base64url."`
	Bits     int    `toml:"bits,omitempty" json:"bits,omitempty" jsonschema:"description=RSA key size: 2048, 3072 or 4096."`
}

// Rollback policies.
const (
	RollbackAutomatic = "automatic"
	RollbackManual    = "manual"
)

// EnvironmentBlock declares an environment.
type EnvironmentBlock struct {
	Branch      string           `toml:"branch,omitempty" json:"branch,omitempty" jsonschema:"description=Branch of the manifest repository it follows."`
	Commit      string           `toml:"commit,omitempty" json:"commit,omitempty" jsonschema:"description=Full commit it deploys instead of its branch head."`
	Sync        *bool            `toml:"sync,omitempty" json:"sync,omitempty" jsonschema:"description=Pushes to its branch deploy it."`
	PromoteFrom string           `toml:"promote_from,omitempty" json:"promote_from,omitempty" jsonschema:"description=Environment it receives promoted releases from."`
	Visibility  string           `toml:"visibility,omitempty" json:"visibility,omitempty" jsonschema:"description=Strictest visibility its routes get. Default public."`
	Rollback    string           `toml:"rollback,omitempty" json:"rollback,omitempty" jsonschema:"description=automatic or manual."`
	Variables   map[string]Value `toml:"variables,omitempty" json:"variables,omitempty" jsonschema:"description=Variable values for this environment."`
}

// Previews holds settings shared by every preview.
type Previews struct {
	Visibility string           `toml:"visibility,omitempty" json:"visibility,omitempty" jsonschema:"description=Strictest visibility preview routes get. Default private."`
	Variables  map[string]Value `toml:"variables,omitempty" json:"variables,omitempty" jsonschema:"description=Variable values for every preview."`
	Schedules  bool             `toml:"schedules,omitempty" json:"schedules,omitempty" jsonschema:"description=Slipway extension (slipway.dev/v1alpha1 only): run scheduled jobs and scheduled backups in previews too. Default false."`
}

// ManifestSource connects the application to a manifest in Git.
type ManifestSource struct {
	Path       string      `toml:"path" json:"path" jsonschema:"description=Manifest path in the repository."`
	Repository *Repository `toml:"repository" json:"repository" jsonschema:"description=The manifest repository."`
	Sync       *Sync       `toml:"sync,omitempty" json:"sync,omitempty" jsonschema:"description=Deploy pushes: poll or webhook."`
}

// Sync modes.
const (
	SyncPoll    = "poll"
	SyncWebhook = "webhook"
)

// Sync configures deploying on push.
type Sync struct {
	Mode            string `toml:"mode" json:"mode" jsonschema:"enum=poll,enum=webhook,description=poll or webhook."`
	IntervalSeconds int    `toml:"interval_seconds,omitempty" json:"interval_seconds,omitempty" jsonschema:"description=Poll interval (60-86400). Default 300."`
}

// Export lets other applications reach a service.
type Export struct {
	Service      string   `toml:"service" json:"service" jsonschema:"description=Exported service."`
	Applications []string `toml:"applications" json:"applications" jsonschema:"description=Applications that may import it."`
	Previews     bool     `toml:"previews,omitempty" json:"previews,omitempty" jsonschema:"description=Let their previews import it too."`
}

// Import reaches another application's exported service.
type Import struct {
	Application string `toml:"application" json:"application" jsonschema:"description=Exporting application."`
	Service     string `toml:"service" json:"service" jsonschema:"description=Exported service."`
	Environment string `toml:"environment,omitempty" json:"environment,omitempty" jsonschema:"description=Exporting environment; default the same name."`
}
