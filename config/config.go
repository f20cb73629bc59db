package config

// DefaultPath is where serve, worker and dev look for the file when neither
// --config nor SLIPWAY_CONFIG names one; a missing file there is fine.
const DefaultPath = "/etc/slipway/slipway.toml"

// EnvConfigPath names the configuration file like --config does.
const EnvConfigPath = "SLIPWAY_CONFIG"

// Config is the whole daemon configuration. Every field carries its TOML key
// (`toml`), its description (`doc`), optional older environment variable
// names that still work (`env`, comma-separated) and whether its value must
// never be printed (`secret`). Defaults live in Default, nowhere else.
type Config struct {
	DatabaseURL    string `toml:"database_url" env:"DATABASE_URL" secret:"true" doc:"Postgres connection URL (postgres://user:password@host:5432/db) or keyword/value string. Required by serve, worker and migrate; slipway dev starts a private Postgres when it is empty."`
	Listen         string `toml:"listen" doc:"Address (host:port) the dashboard, API and webhooks listen on."`
	PublicURL      string `toml:"public_url" doc:"Base URL people and GitHub reach the dashboard at, such as https://slipway.example.com. Used in links, PR comments and webhook URLs; empty means http://<listen>."`
	SecretKeyFile  string `toml:"secret_key_file" doc:"File holding the key-encryption key of stored secrets: 32 raw bytes, or one key per line as 64 hex digits or base64 (the first encrypts, the others only decrypt, for rotation). Keep it out of database backups."`
	SecretKey      string `toml:"secret_key" secret:"true" doc:"The key text itself, for setups that cannot mount a file; secret_key_file wins when both are set."`
	DataDir        string `toml:"data_dir" doc:"Directory for local state: build checkouts, the control socket, telemetry receivers' socket directories (telemetry/<environment short id>) and, in dev, the private Postgres."`
	LogLevel       string `toml:"log_level" doc:"Minimum log level: debug, info, warn or error (any case)."`
	InstallationID string `toml:"installation_id" doc:"Name of this Slipway installation, put on the labels of the images it builds so that several installations can share one Docker engine: 1-63 lowercase letters, digits and hyphens."`
	SecureCookies  bool   `toml:"secure_cookies" doc:"Mark session cookies Secure even when listening on plain HTTP, for a TLS-terminating proxy in front."`

	Reconciliation Reconciliation `toml:"reconciliation" doc:"How long deployments may take and how often running environments are compared with what they should run."`
	Previews       Previews       `toml:"previews" doc:"Bounds on every preview environment; environments are never bounded."`
	Ingress        Ingress        `toml:"ingress" doc:"The managed ingress gateway (the slipway-gateway container)."`
	GitHub         GitHub         `toml:"github" doc:"The GitHub App that deploys on push and runs pull-request previews. app_id 0 (the default) turns GitHub off."`
	Metrics        Metrics        `toml:"metrics" doc:"The Prometheus endpoint /metrics. Without a token it answers 404: metrics are off."`
	Telemetry      Telemetry      `toml:"telemetry" doc:"OpenTelemetry export: traces of deployments, and the daemon's own logs and metrics."`
	Worker         Worker         `toml:"worker" doc:"Background workers (River)."`
	Images         Images         `toml:"images" doc:"Container images of deployed services."`
	Git            Git            `toml:"git" doc:"Git repositories that applications build from and read manifests from."`
	Registry       Registry       `toml:"registry" doc:"Where built images go so that every node of the Swarm can pull them (docs/cluster.md)."`
	Security       Security       `toml:"security" doc:"Where connections that tenants direct may go (docs/security.md)."`
	Containers     Containers     `toml:"containers" doc:"Limits every tenant container gets, whatever its manifest says (docs/security.md)."`
	Quotas         Quotas         `toml:"quotas" doc:"Each team's default quotas; slipway admin team quota overrides them per team. A save, deploy or preview that would exceed one is refused with quota_exceeded."`
}

// Registry modes.
const (
	RegistryAuto     = "auto"
	RegistryEmbedded = "embedded"
	RegistryExternal = "external"
	RegistryOff      = "off"
)

// Registry holds where built images are pushed.
type Registry struct {
	Mode         string `toml:"mode" doc:"auto: the embedded registry once the Swarm has more than one node, local images on a single node; embedded: always the embedded registry; external: the registry at url; off: local images only (one node)."`
	URL          string `toml:"url" doc:"External registry and repository prefix, such as registry.example.com/slipway (https) or http://10.0.0.5:5000/slipway; setting it selects mode external."`
	User         string `toml:"user" doc:"User name for the external registry."`
	PasswordFile string `toml:"password_file" doc:"File holding the external registry's password or token."`
	Port         int    `toml:"port" doc:"Port the embedded registry's relay publishes on every node; engines pull from 127.0.0.1:<port>, which Docker trusts over plain HTTP."`
	Image        string `toml:"image" doc:"Slipway image the embedded registry and its relay run (entrypoint /slipway), pullable by every node; empty: ingress.image, else one built FROM scratch out of the worker's own binary (present on the worker's node only)."`
	APIURL       string `toml:"api_url" doc:"Where the worker reaches the registry's HTTP API to delete images no deployment keeps: empty means http://127.0.0.1:<port> (a worker on a node's own network) for the embedded registry and the url's host for an external one; the stack file sets http://slipway-registry:5000."`
}

// Containers holds the confinement of tenant containers.
type Containers struct {
	PidsLimit          int64 `toml:"pids_limit" doc:"Processes (and threads) one container may run at once; a fork bomb stops there."`
	DefaultMemoryBytes int64 `toml:"default_memory_bytes" doc:"Memory limit in bytes of a service that sets no resources.memory_bytes."`
}

// Quotas are each team's default limits.
type Quotas struct {
	Applications          int   `toml:"applications" doc:"Applications a team may have."`
	Environments          int   `toml:"environments" doc:"Environments a team may have across its applications, previews not counted."`
	Previews              int   `toml:"previews" doc:"Preview environments a team may have at once."`
	Replicas              int   `toml:"replicas" doc:"Replicas a team's services may run in total, across environments and previews."`
	CPUMillis             int64 `toml:"cpu_millis" doc:"CPU a team's services may reserve in total, in millicores (replicas times resources.cpu_millis)."`
	MemoryBytes           int64 `toml:"memory_bytes" doc:"Memory a team's services may reserve in total, in bytes (replicas times resources.memory_bytes; a service that declares none reserves none and is limited to containers.default_memory_bytes)."`
	Volumes               int   `toml:"volumes" doc:"Volumes a team's applications may declare in total."`
	Secrets               int   `toml:"secrets" doc:"Stored secrets a team may keep (each name counts once, whatever its versions)."`
	ConcurrentBuilds      int   `toml:"concurrent_builds" doc:"Deployments that build images a team may run at once; more wait their turn."`
	ConcurrentDeployments int   `toml:"concurrent_deployments" doc:"Deployments a team's jobs may work on at once; more wait their turn and leave the worker to other teams, so one team's burst does not hold every worker (worker.deploy_concurrency)."`
}

// Security holds the outbound policy's allowances.
type Security struct {
	AllowedOutboundNetworks []string `toml:"allowed_outbound_networks" doc:"Networks (CIDRs such as 10.20.0.0/16 or fd12:3456::/48) that connections tenants direct may reach although they are loopback, link-local, private, unique-local, shared, the host's own or Docker's: git remotes, registries of images to pull, any URL from a manifest or a team setting. Empty: none; every such destination is refused with destination_not_allowed. In the environment, separate CIDRs with commas. slipway dev also allows loopback."`
}

// Reconciliation holds the spec's reconciliation.* settings.
type Reconciliation struct {
	ConvergenceTimeoutSeconds int `toml:"convergence_timeout_seconds" doc:"Seconds each service of a deployment (and each dependency in turn) gets to run every replica and pass its health check before the deployment fails."`
	PrepareTimeoutSeconds     int `toml:"prepare_timeout_seconds" doc:"Seconds a deployment may spend preparing: pulling images, checking out and building git sources."`
	ScanIntervalSeconds       int `toml:"scan_interval_seconds" doc:"Seconds between full scans that compare what runs on Swarm with each environment's deployment and repair drift."`
}

// Previews holds the daemon's [previews] limits.
type Previews struct {
	MaxPerApplication  int   `toml:"max_per_application" doc:"Previews one application may have; creating one more fails with preview_limit_reached. 0 disables previews."`
	MaxTotal           int   `toml:"max_total" doc:"Previews across all applications; creating one more fails with preview_limit_reached."`
	DefaultCPUMillis   int   `toml:"default_cpu_millis" doc:"CPU limit in millicores given to a preview service that sets none (a warning, never an error)."`
	DefaultMemoryBytes int64 `toml:"default_memory_bytes" doc:"Memory limit in bytes given to a preview service that sets none (a warning, never an error)."`
	MaxReplicas        int   `toml:"max_replicas" doc:"Replicas a preview service may run; more are capped to this with a warning."`
}

// Ingress holds the gateway's listeners and image.
type Ingress struct {
	Enabled     bool   `toml:"enabled" doc:"Expose routes through the gateway. Routes are still accepted and deployed while it is off, but not served."`
	HTTPPort    int    `toml:"http_port" env:"SLIPWAY_GATEWAY_HTTP_PORT" doc:"Host port the gateway publishes for HTTP (ACME challenges and redirects to HTTPS)."`
	HTTPSPort   int    `toml:"https_port" env:"SLIPWAY_GATEWAY_HTTPS_PORT" doc:"Host port the gateway publishes for HTTPS; 0 disables HTTPS."`
	PrivateAddr string `toml:"private_addr" env:"SLIPWAY_GATEWAY_PRIVATE_ADDR" doc:"Host ip:port of the listener for private routes, such as a tailnet interface address; empty disables private routes."`
	Image       string `toml:"image" env:"SLIPWAY_GATEWAY_IMAGE" doc:"Image reference of the gateway container serve and dev keep running; empty: they build one FROM scratch out of their own static binary."`
	ACME        ACME   `toml:"acme" doc:"Certificates for public hostnames."`
	// The route-table feed on TCP, for gateways on other nodes.
	FeedAddr         string `toml:"feed_addr" doc:"Address (host:port) where serve also offers the route table and takes certificate reports over TCP, for gateways on other nodes (slipway gateway --control-url http://HOST:PORT --token-file FILE); requests must carry Authorization: Bearer <gateway token>. Empty: only the unix socket."`
	GatewayTokenFile string `toml:"gateway_token_file" doc:"File holding the gateway token that feed_addr requires. Setting both gateway_token_file and gateway_token is an error."`
	GatewayToken     string `toml:"gateway_token" secret:"true" doc:"The gateway token itself; prefer gateway_token_file."`
	// The gateway's own /metrics, published on the host for Prometheus.
	MetricsAddr      string `toml:"metrics_addr" doc:"Host ip:port where the gateway container publishes its /metrics (slipway_gateway_* per route, Go runtime), such as 127.0.0.1:9100 or a private interface; empty: no gateway metrics."`
	MetricsTokenFile string `toml:"metrics_token_file" doc:"Absolute path of the file holding the bearer token that scrapes of metrics_addr must send (Authorization: Bearer <token>); required with metrics_addr, mounted read-only into the gateway container, which reads it when it starts."`
	// Limits on every request the gateway passes on.
	MaxBodyBytes           int64    `toml:"max_body_bytes" doc:"Largest request body the gateway passes to an application, in bytes; a larger one is answered 413 and its connection closed. 0 turns the limit off. The default, 100 MiB, lets ordinary uploads through (nginx's 1 MiB refuses most of them); raise it for applications that take backups or videos."`
	BodyIdleTimeoutSeconds int      `toml:"body_idle_timeout_seconds" doc:"Seconds a client may send nothing of a request body it started before the gateway answers 408, closes its connection and releases the application's (nginx's client_body_timeout)."`
	SendTimeoutSeconds     int      `toml:"send_timeout_seconds" doc:"Seconds a write of a response to a client may make no progress (a client that stopped reading) before the gateway closes its connection (over HTTP/2 the whole connection) and the application's, never reused (nginx's send_timeout)."`
	TrustedProxies         []string `toml:"trusted_proxies" doc:"Proxies in front of the gateway (load balancers, CDNs), as CIDRs or addresses such as [\"10.0.0.0/8\"]: from them the gateway appends to X-Forwarded-For and keeps X-Forwarded-Proto; from every other client it replaces X-Forwarded-*, Forwarded and X-Real-IP. Empty: no client is trusted."`
}

// ACME holds the gateway's certificate settings.
type ACME struct {
	Directory string `toml:"directory" env:"SLIPWAY_ACME_DIRECTORY" doc:"ACME directory URL, such as https://acme-v02.api.letsencrypt.org/directory; empty disables ACME and serves the internal CA's certificates."`
	Email     string `toml:"email" env:"SLIPWAY_ACME_EMAIL" doc:"Contact address given to the ACME CA for expiry notices."`
	CARoot    string `toml:"ca_root" env:"SLIPWAY_ACME_CA_ROOT" doc:"PEM file of the ACME server's root, for a private ACME CA."`
	CertDir   string `toml:"cert_dir" env:"SLIPWAY_GATEWAY_CERT_DIR" doc:"Directory of operator certificates (NAME.crt and NAME.key pairs), preferred over ACME for the names they cover."`
}

// GitHub holds the GitHub App's identity and keys.
type GitHub struct {
	APIURL            string `toml:"api_url" doc:"GitHub REST API base URL; https://<host>/api/v3 for GitHub Enterprise Server."`
	AppID             int64  `toml:"app_id" doc:"The GitHub App's numeric id; 0 turns the GitHub integration off."`
	AppSlug           string `toml:"app_slug" doc:"The App's URL name (github.com/apps/<slug>), used for the install link."`
	PrivateKeyFile    string `toml:"private_key_file" doc:"PEM file of the App's private key, which signs its JWTs."`
	WebhookSecretFile string `toml:"webhook_secret_file" doc:"File holding the webhook secret that X-Hub-Signature-256 is checked against."`
}

// Metrics holds the /metrics bearer token.
type Metrics struct {
	TokenFile string `toml:"token_file" doc:"File holding the bearer token Prometheus sends (Authorization: Bearer <token>). Setting both token_file and token is an error."`
	Token     string `toml:"token" secret:"true" doc:"The bearer token itself; prefer token_file."`
	// serve and dev answer /metrics on their own listener; a worker has
	// none, so it listens here.
	WorkerListen string `toml:"worker_listen" doc:"Address (ip:port) where slipway worker serves its own /metrics (deployments, job attempts, drift repairs), with the same token; empty: the worker serves none (slipway dev serves one /metrics for both)."`
}

// Telemetry holds the OTLP exporter settings.
type Telemetry struct {
	OTLPEndpoint           string `toml:"otlp_endpoint" doc:"OTLP/HTTP base URL traces, logs and metrics are exported to, such as http://collector:4318 (each signal's /v1/traces, /v1/logs or /v1/metrics is appended); empty exports nothing."`
	MetricsIntervalSeconds int    `toml:"metrics_interval_seconds" doc:"Seconds between exports of the daemon's metrics to otlp_endpoint and to telemetry receivers."`
}

// Worker holds River worker settings.
type Worker struct {
	DeployConcurrency  int `toml:"deploy_concurrency" doc:"Deployments one worker process runs at once (one per environment at a time regardless)."`
	UsageSampleSeconds int `toml:"usage_sample_seconds" doc:"Seconds between usage samples (the charts' CPU, memory, network and route traffic). Keep the default, 15, the charts' finest step; shorter intervals, for tests and demonstrations, store more rows."`
}

// Images holds settings about service images.
type Images struct {
	Pull bool `toml:"pull" doc:"Pull service images from their registry when deploying; off uses only images already on the nodes."`
}

// Git holds the policy on repository URLs.
type Git struct {
	AllowFileURLs bool `toml:"allow_file_urls" doc:"Accept file:// repository URLs, read from the worker's own file system. Off by default: with it, any tenant can build from any git repository the worker can read. slipway dev turns it on unless SLIPWAY_GIT_ALLOW_FILE_URLS is set."`
}

// Default is the configuration with nothing set: the single source of every
// default value, read by decoding, the default file and the documentation.
func Default() Config {
	return Config{
		Listen:         "127.0.0.1:8080",
		DataDir:        "/var/lib/slipway",
		LogLevel:       "info",
		InstallationID: "default",
		Reconciliation: Reconciliation{
			ConvergenceTimeoutSeconds: 120,
			PrepareTimeoutSeconds:     300,
			ScanIntervalSeconds:       60,
		},
		Previews: Previews{
			MaxPerApplication:  10,
			MaxTotal:           100,
			DefaultCPUMillis:   500,
			DefaultMemoryBytes: 512 << 20,
			MaxReplicas:        2,
		},
		Telemetry: Telemetry{MetricsIntervalSeconds: 30},
		Ingress: Ingress{
			Enabled:                true,
			HTTPPort:               80,
			HTTPSPort:              443,
			MaxBodyBytes:           100 << 20,
			BodyIdleTimeoutSeconds: 60,
			SendTimeoutSeconds:     60,
			TrustedProxies:         []string{},
		},
		GitHub:   GitHub{APIURL: "https://api.github.com"},
		Worker:   Worker{DeployConcurrency: 4, UsageSampleSeconds: 15},
		Images:   Images{Pull: true},
		Registry: Registry{Mode: RegistryAuto, Port: 5000},
		Security: Security{AllowedOutboundNetworks: []string{}},
		Containers: Containers{
			PidsLimit:          1024,
			DefaultMemoryBytes: 512 << 20,
		},
		Quotas: Quotas{
			Applications:          50,
			Environments:          200,
			Previews:              50,
			Replicas:              200,
			CPUMillis:             64_000,
			MemoryBytes:           128 << 30,
			Volumes:               100,
			Secrets:               500,
			ConcurrentBuilds:      2,
			ConcurrentDeployments: 3,
		},
	}
}
